-- Counters were listed most recent rejection first, by a time every rejection moves: a counter
-- rejected again while an admin paged through the listing jumped ahead of the cursor and was
-- listed on no page. They are listed newest counter first now, by when each was created, which
-- does not change (as credentials are, migration 0010). Counters that exist already take the
-- time of this migration; their ids order them among themselves.
-- A page cursor carries the time it is ordered by: one an instance of the previous release gave
-- (a last rejection) read by this release as a creation time, or the other way round, may skip or
-- repeat counters while a rolling upgrade runs; a listing started again after it is whole.
ALTER TABLE rejection_counters ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX rejection_counters_tenant_created ON rejection_counters (tenant_id, created_at, id);
