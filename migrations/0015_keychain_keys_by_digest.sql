-- A credential's realm, path and account may each be up to 1000 or 2000 characters, up to four
-- bytes each, but a B-tree index entry holds at most about 2.7 KB: a credential keyed by long ones
-- failed to save. The keychain key now holds those three as SHA-256 digests, which are as unique.
-- Credentials are still found by their attributes (CredentialStore.find compares the digests too,
-- so that the lookup uses this index). Instances of the previous release are not affected: they
-- rely on the index only to refuse a second row for one key, as this one does.

-- sha256() takes bytes; convert_to() is only stable in general, but a database's encoding never
-- changes, so the digest of a text is immutable here, as an index expression must be.
CREATE FUNCTION text_sha256(value text) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT sha256(convert_to(value, 'UTF8')) $$;

DROP INDEX credentials_keychain_key;
CREATE UNIQUE INDEX credentials_keychain_key ON credentials (
    tenant_id, owner, coalesce(owner_client_id, ''), coalesce(owner_session_id::text, ''), (submitted_by_client IS NULL),
    is_proxy, host, coalesce(port, -1), coalesce(protocol, ''), text_sha256(coalesce(realm, '')),
    text_sha256(coalesce(path, '')), coalesce(authentication_method, ''), text_sha256(account));
