-- The credential listing is paged newest first; clients can grow it (submitted credentials),
-- so each page reads its rows from this index instead of sorting the tenant's credentials.
CREATE INDEX credentials_tenant_created ON credentials (tenant_id, created_at, id);
