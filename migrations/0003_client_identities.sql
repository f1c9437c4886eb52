-- Client identities for TLS client authentication, and server-trust answers remembered by sessions.

-- An identity is a credential of kind 'clientIdentity': it shares the credentials' id space,
-- sealed secret (the PKCS#8 private key, AES-256-GCM under the tenant's data key, associated
-- data tenant id and row id), history, rejection counters and session memory. Its row has
-- owner 'tenant', host '*', account = the leaf's subject and path = the leaf's SHA-256
-- fingerprint, so the keychain key refuses the same certificate twice.
ALTER TABLE credentials DROP CONSTRAINT credentials_kind_check;
ALTER TABLE credentials ADD CONSTRAINT credentials_kind_check CHECK (kind IN ('password', 'clientIdentity'));

-- The public side of an identity: what listings show and what decisions choose by.
CREATE TABLE client_identities (
    credential_id      uuid PRIMARY KEY REFERENCES credentials (id) ON DELETE CASCADE,
    tenant_id          uuid NOT NULL REFERENCES tenants (id),
    subject            text NOT NULL,
    issuer             text NOT NULL,
    serial_number      text NOT NULL,
    not_before         timestamptz NOT NULL,
    not_after          timestamptz NOT NULL,
    sha256_fingerprint text NOT NULL CHECK (sha256_fingerprint ~ '^[0-9a-f]{64}$'),
    key_algorithm      text NOT NULL,
    -- The leaf then the rest of the chain, PEM.
    certificate_chain  text NOT NULL,
    -- Subjects of the chain after the leaf (JSON array of strings).
    chain_subjects     jsonb NOT NULL DEFAULT '[]',
    -- DER names (base64) a TLS server may list as acceptable CAs for this identity.
    issuer_names       jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX client_identities_tenant ON client_identities (tenant_id, not_after);

-- A trusted server chain remembered by a session: the evaluation that trusted it.
ALTER TABLE session_memory ADD COLUMN trust_evaluation jsonb;
