-- The index of migration 0027's stamps, which a cached tenant state is brought up to date by.
-- In a migration of its own: a plain CREATE INDEX holds writes to credentials while it builds
-- (seconds at tens of thousands of rows), but not reads, which 0027's ALTER TABLE would have held
-- for as long.
CREATE INDEX credentials_changed ON credentials (tenant_id, changed_version);
