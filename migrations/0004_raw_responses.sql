-- Raw 401/407 responses: Digest nonce counts kept centrally, and the `refused` outcome.

-- How many requests each credential has sent with each Digest nonce, across all clients and
-- instances. The count is taken with one atomic upsert per Authorization header issued, so
-- no two headers ever carry the same (nonce, nc). The nonce is server-chosen and up to
-- 16 KiB long, so rows are keyed by its SHA-256.
CREATE TABLE digest_nonce_counts (
    tenant_id     uuid NOT NULL REFERENCES tenants (id),
    -- No foreign key to credentials (as rejection_counters): counts of a deleted credential are
    -- never read again (the upsert checks the credential exists) and go with the sweep.
    credential_id uuid NOT NULL,
    nonce_sha256  bytea NOT NULL,
    count         bigint NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, credential_id, nonce_sha256)
);
-- Servers expire nonces within minutes to hours; old counts are swept.
CREATE INDEX digest_nonce_counts_updated ON digest_nonce_counts (updated_at);

-- A 403 after a released credential: the server took the credential and refuses anyway.
-- Recorded as its own outcome, never counted as a rejection.
ALTER TABLE decisions DROP CONSTRAINT decisions_outcome_check;
ALTER TABLE decisions ADD CONSTRAINT decisions_outcome_check
    CHECK (outcome IN ('accepted', 'rejected', 'cancelled', 'refused'));

-- Finding the latest credential released to a task for one server (raw responses look it up to
-- count a repeated 401 as the rejection of the header just issued) uses decisions_session_task:
-- a task has few decisions, and one more index would cost every decision an insert.
