-- A credential whose password never leaves the service (`exportable` false): no challenge answer,
-- security-check answer, Basic header or NTLM handshake carries it; it answers Digest challenges
-- of raw responses, whose header the service computes. The flag is also sealed with the secret
-- (its associated data): a release before this one, which does not read the column, cannot open
-- such a secret and answers secret_unreadable instead of releasing it, and a flag turned in the
-- database alone makes the secret open nowhere.
ALTER TABLE credentials ADD COLUMN exportable boolean NOT NULL DEFAULT true;
