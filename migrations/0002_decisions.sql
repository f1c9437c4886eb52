-- Challenge decisions: policies, credentials, sessions, decision records and rejection counters.

-- Bumped by every change that cached decision state depends on (policy, credentials, blocks);
-- each decision is recorded only if the version it was decided against is still current.
ALTER TABLE tenants ADD COLUMN state_version bigint NOT NULL DEFAULT 0;

-- One data key per tenant, AES-256-GCM sealed under the master key, which never enters the
-- database. Associated data: the tenant id.
CREATE TABLE tenant_data_keys (
    tenant_id  uuid PRIMARY KEY REFERENCES tenants (id),
    sealed_key bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE policies (
    tenant_id  uuid PRIMARY KEY REFERENCES tenants (id),
    version    int NOT NULL,
    document   jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    updated_by text NOT NULL
);

-- Every version ever saved, for the audit.
CREATE TABLE policy_versions (
    tenant_id  uuid NOT NULL REFERENCES tenants (id),
    version    int NOT NULL,
    document   jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text NOT NULL,
    PRIMARY KEY (tenant_id, version)
);

CREATE TABLE sessions (
    id                  uuid PRIMARY KEY,
    tenant_id           uuid NOT NULL REFERENCES tenants (id),
    client_id           text NOT NULL,
    label               text,
    created_by_key      uuid NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    expires_at          timestamptz NOT NULL,
    invalidated_at      timestamptz,
    invalidation_reason text CHECK (invalidation_reason IN ('explicit', 'expired')),
    invalidation_mode   text CHECK (invalidation_mode IN ('finishTasks', 'cancel')),
    -- Bumped when the session's memory changes, for the same reason as tenants.state_version.
    state_version       bigint NOT NULL DEFAULT 0
);

CREATE INDEX sessions_tenant_client ON sessions (tenant_id, client_id, created_at);
CREATE INDEX sessions_expiring ON sessions (expires_at) WHERE invalidated_at IS NULL;

-- Credentials, keyed like keychain internet passwords. Owner: the tenant (admin-provisioned or
-- submitted as synchronizable), one client (permanent), or one session (forSession).
CREATE TABLE credentials (
    id                    uuid PRIMARY KEY,
    tenant_id             uuid NOT NULL REFERENCES tenants (id),
    kind                  text NOT NULL CHECK (kind IN ('password')),
    owner                 text NOT NULL CHECK (owner IN ('tenant', 'client', 'session')),
    owner_client_id       text,
    owner_session_id      uuid REFERENCES sessions (id) ON DELETE CASCADE,
    submitted_by_client   text,
    host                  text NOT NULL,
    port                  int,
    protocol              text,
    realm                 text,
    path                  text,
    authentication_method text,
    is_proxy              boolean NOT NULL,
    account               text NOT NULL,
    domain                text,
    label                 text,
    -- AES-256-GCM under the tenant's data key; associated data: tenant id and credential id.
    sealed_secret         bytea NOT NULL,
    secret_version        int NOT NULL DEFAULT 1,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT credentials_owner_shape CHECK (
        (owner = 'tenant' AND owner_client_id IS NULL AND owner_session_id IS NULL)
        OR (owner = 'client' AND owner_client_id IS NOT NULL AND owner_session_id IS NULL)
        OR (owner = 'session' AND owner_client_id IS NOT NULL AND owner_session_id IS NOT NULL))
);

-- Saving a credential with the same keychain key updates it in place.
CREATE UNIQUE INDEX credentials_keychain_key ON credentials (
    tenant_id, owner, coalesce(owner_client_id, ''), coalesce(owner_session_id::text, ''), is_proxy,
    host, coalesce(port, -1), coalesce(protocol, ''), coalesce(realm, ''), coalesce(path, ''),
    coalesce(authentication_method, ''), account);
CREATE INDEX credentials_tenant_host ON credentials (tenant_id, host);

CREATE TABLE credential_history (
    id            bigserial PRIMARY KEY,
    tenant_id     uuid NOT NULL,
    credential_id uuid NOT NULL,
    at            timestamptz NOT NULL DEFAULT now(),
    event         text NOT NULL,
    actor         text NOT NULL,
    details       jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX credential_history_credential ON credential_history (tenant_id, credential_id, id);

-- What a session remembers per protection space. No foreign key to credentials: the check
-- would lock the credential row from the decision writer, against the lock order (sessions,
-- decisions, counters, tenants); deleting a credential deletes its memory rows itself.
CREATE TABLE session_memory (
    session_id         uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    space_key          text NOT NULL,
    disposition        text NOT NULL,
    credential_id      uuid,
    persistence        text NOT NULL,
    rule_id            text,
    rule_name          text,
    max_failures       int,
    blocked_disposition text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, space_key)
);

CREATE TABLE decisions (
    id                     uuid PRIMARY KEY,
    tenant_id              uuid NOT NULL REFERENCES tenants (id),
    session_id             uuid NOT NULL REFERENCES sessions (id),
    client_id              text NOT NULL,
    key_id                 uuid NOT NULL,
    task_id                text NOT NULL,
    kind                   text NOT NULL DEFAULT 'challenge',
    space_key              text NOT NULL,
    host                   text NOT NULL,
    port                   int NOT NULL,
    protocol               text,
    realm                  text,
    authentication_method  text NOT NULL,
    is_proxy               boolean NOT NULL,
    previous_failure_count int NOT NULL DEFAULT 0,
    disposition            text NOT NULL,
    persistence            text NOT NULL,
    scope                  text NOT NULL,
    source                 text NOT NULL,
    reason                 text NOT NULL,
    rule_id                text,
    rule_name              text,
    credential_id          uuid,
    released_user          text,
    max_failures           int,
    block_seconds          int,
    block_increment_seconds int,
    max_block_seconds      int,
    blocked_until          timestamptz,
    created_at             timestamptz NOT NULL DEFAULT now(),
    outcome                text CHECK (outcome IN ('accepted', 'rejected', 'cancelled')),
    outcome_status         int,
    outcome_at             timestamptz,
    -- How the outcome arrived: 'report' (the client said), 'retry' (the same space came back
    -- with previousFailureCount > 0 naming the released user), 'session' (invalidateAndCancel).
    outcome_source         text,
    counted                boolean NOT NULL DEFAULT false
);

CREATE INDEX decisions_tenant_time ON decisions (tenant_id, created_at DESC, id DESC);
-- Every index here is written by every decision: the session and task one also serves the
-- lookups of a session's pending decisions and of a task's latest release.
CREATE INDEX decisions_session_task ON decisions (session_id, task_id, space_key, created_at DESC);
CREATE INDEX decisions_tenant_credential ON decisions (tenant_id, credential_id, created_at DESC) WHERE credential_id IS NOT NULL;

-- Rejections per tenant, protection space and credential, across all clients and instances.
-- No foreign key to credentials, for the same reason as session_memory.
CREATE TABLE rejection_counters (
    id                uuid PRIMARY KEY,
    tenant_id         uuid NOT NULL REFERENCES tenants (id),
    credential_id     uuid NOT NULL,
    space_key         text NOT NULL,
    -- Rejections since the last accepted outcome or reset; the credential blocks when this
    -- reaches the rule's maxFailures.
    failures          int NOT NULL DEFAULT 0,
    total_rejections  bigint NOT NULL DEFAULT 0,
    last_rejection_at timestamptz,
    blocked_until     timestamptz,
    blocks            int NOT NULL DEFAULT 0,
    last_blocked_at   timestamptz,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT rejection_counters_key UNIQUE (tenant_id, credential_id, space_key)
);
CREATE INDEX rejection_counters_blocked ON rejection_counters (credential_id) WHERE blocked_until IS NOT NULL;
CREATE INDEX session_memory_credential ON session_memory (credential_id) WHERE credential_id IS NOT NULL;

CREATE TABLE rejection_counter_clients (
    counter_id        uuid NOT NULL REFERENCES rejection_counters (id) ON DELETE CASCADE,
    client_id         text NOT NULL,
    rejections        bigint NOT NULL DEFAULT 0,
    last_rejection_at timestamptz NOT NULL,
    PRIMARY KEY (counter_id, client_id)
);
