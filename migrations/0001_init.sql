-- Tenants and their API keys.

CREATE TABLE tenants (
    id          uuid PRIMARY KEY,
    name        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    disabled_at timestamptz,
    CONSTRAINT tenants_name_unique UNIQUE (name),
    CONSTRAINT tenants_name_length CHECK (char_length(name) BETWEEN 1 AND 200)
);

CREATE TABLE api_keys (
    id          uuid PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants (id),
    -- The public part of the key: indexes the row so the secret is never a lookup key.
    lookup_id   text NOT NULL,
    -- SHA-256 of the whole key. Keys carry 256 random bits, so a slow password hash buys nothing.
    secret_hash bytea NOT NULL,
    role        text NOT NULL,
    name        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- 'operator' or the id of the admin key that created it.
    created_by  text NOT NULL,
    revoked_at  timestamptz,
    CONSTRAINT api_keys_lookup_id_unique UNIQUE (lookup_id),
    CONSTRAINT api_keys_role_valid CHECK (role IN ('client', 'admin')),
    CONSTRAINT api_keys_secret_hash_length CHECK (octet_length(secret_hash) = 32)
);

CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);
