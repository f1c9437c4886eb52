-- A value sealed under the master key (AES-256-GCM), which that key opens and no other does: an
-- instance started with another master key is refused before it serves, even before any tenant
-- has a data key (until now only the data keys could tell), and `countersign rekey` seals it anew
-- with the data keys when the master key is rotated. The master key itself never enters the
-- database. Written by the first instance that checks its key (SecretVault+MasterKey.swift).
CREATE TABLE master_key_check (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    sealed     bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    rotated_at timestamptz
);
