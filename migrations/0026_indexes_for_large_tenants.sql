-- Indexes that keep work proportional to what is asked for, not to how much a tenant (or the
-- database) holds, found by a review at scale (22,000 credentials, 200,000 counters, 100,000 keys):
--
-- - credentials.owner_session_id: the foreign key's cascade, and the deletion of an ended
--   session's forSession credentials, looked for a session's credentials by scanning every
--   credential of every tenant; the retention sweep, deleting 5,000 sessions at a time, ran past
--   the statement timeout at about 20,000 credentials and never deleted an ended session again.
-- - rejection_counters by credential: a new secret's reset and a credential's deletion scanned
--   every tenant's counters.
-- - rejection_counters' live blocks, by tenant: every load of a tenant's state read every counter
--   of every tenant that was ever blocked (a block's end leaves blocked_until set).
-- - api_keys' revocations, by tenant: the same load scanned all the tenant's keys (one per device).
-- - rejection_counter_clients by recency: a counter lists its 50 clients refused most recently,
--   of what may be a client per device of a fleet.
CREATE INDEX credentials_owner_session ON credentials (owner_session_id) WHERE owner_session_id IS NOT NULL;
CREATE INDEX rejection_counters_credential ON rejection_counters (credential_id);
DROP INDEX rejection_counters_blocked;
CREATE INDEX rejection_counters_blocked ON rejection_counters (tenant_id, blocked_until) WHERE blocked_until IS NOT NULL;
CREATE INDEX api_keys_revoked ON api_keys (tenant_id, revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX rejection_counter_clients_recent ON rejection_counter_clients (counter_id, last_rejection_at DESC, client_id);
