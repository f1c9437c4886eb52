-- Ended sessions (invalidated, or expired and swept) are deleted once they are older than the
-- retention period, like decisions; this finds them without reading the live ones.
CREATE INDEX sessions_ended ON sessions (invalidated_at) WHERE invalidated_at IS NOT NULL;
