-- A client key may be bound to one clientId: it then opens sessions under that clientId only, and
-- reaches only that client's sessions and decisions. A key shared by a fleet (null) may claim any
-- clientId, as before. The permanent credentials a device typed are kept under its clientId, so a
-- key per device keeps one device from being served, or replacing, another's. A bound key's
-- lookup id is stored marked (`bound:<id>`): instances of an earlier release, which look the plain
-- id up, do not find it and refuse it (401) during an upgrade, rather than take it as a fleet key.
ALTER TABLE api_keys ADD COLUMN client_id text;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_client_id_only_for_clients CHECK (client_id IS NULL OR role = 'client');
