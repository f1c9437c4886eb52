-- A credential a client submitted for the whole tenant (synchronizable) is never the same row as
-- one an admin provisioned, even with the same keychain attributes: a client's submission must
-- not replace an admin's secret, nor reset its rejection counters and lift its block. Client
-- submissions of one key still share a row, as one synchronized keychain item.
DROP INDEX credentials_keychain_key;
CREATE UNIQUE INDEX credentials_keychain_key ON credentials (
    tenant_id, owner, coalesce(owner_client_id, ''), coalesce(owner_session_id::text, ''), (submitted_by_client IS NULL),
    is_proxy, host, coalesce(port, -1), coalesce(protocol, ''), coalesce(realm, ''), coalesce(path, ''),
    coalesce(authentication_method, ''), account);
