-- Security-check states were listed most recently changed first, by a time every challenge and
-- report moves: a state that changed while an admin paged through the listing jumped ahead of the
-- cursor and was listed on no page. They are listed newest first now, by when the client was first
-- challenged for the check, which does not change (as counters are, migration 0017). States that
-- exist already take the time of this migration; their check and client order them among
-- themselves.
-- A page cursor carries the time it is ordered by: one an instance of the previous release gave
-- (a change) read by this release as a creation time, or the other way round, may skip or repeat
-- states while a rolling upgrade runs; a listing started again after it is whole.
ALTER TABLE security_check_states ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX security_check_states_tenant_created ON security_check_states (tenant_id, created_at, security_check, client_id);
