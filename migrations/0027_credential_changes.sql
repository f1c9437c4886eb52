-- What changed in a tenant's credentials since a state version, so that a cached tenant state
-- is brought up to date by reading those rows, not every credential: a block, a saved credential
-- or a client's permanent one reloaded all of a large tenant's (about 150 ms at 22,000), and
-- every decision of the tenant waited for it.
--
-- Each write of a credential in the tenant's set (every owner but 'session') bumps the tenant's
-- state version and stamps the row, or a removal's record, with the bumped value. The triggers
-- are deferred to the commit: the tenant's row is then locked last, as every transaction here
-- locks it (sessions, decisions, credentials, counters, tenants), and held until the commit
-- ends, so a tenant's stamps are handed out in commit order. A state read at version V holds
-- every row stamped V or lower, and what it lacks is stamped above V.
--
-- Adding the column locks the table only for a moment (no rewrite); its index is built by the
-- next migration, in a transaction of its own that holds writes alone, not reads.
ALTER TABLE credentials ADD COLUMN changed_version bigint NOT NULL DEFAULT 0;

-- Kept a day (`PeriodicSweep.credentialRemovals`); cached states older than ten minutes are read
-- whole. No foreign key: the tenant may be gone (its removals are swept alike).
CREATE TABLE credential_removals (
    tenant_id       uuid NOT NULL,
    credential_id   uuid NOT NULL,
    changed_version bigint NOT NULL,
    removed_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credential_removals_tenant ON credential_removals (tenant_id, changed_version);
CREATE INDEX credential_removals_age ON credential_removals (removed_at);

CREATE FUNCTION credential_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    stamp bigint;
    row_tenant uuid := CASE WHEN TG_OP = 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END;
BEGIN
    UPDATE tenants SET state_version = state_version + 1 WHERE id = row_tenant RETURNING state_version INTO stamp;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    -- Deleted, or handed to a session (which then may delete it unrecorded): gone from the set.
    IF TG_OP = 'DELETE' OR NEW.owner = 'session' THEN
        INSERT INTO credential_removals (tenant_id, credential_id, changed_version)
        VALUES (row_tenant, CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END, stamp);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        -- Nothing when the row was deleted later in the transaction (its removal is recorded).
        UPDATE credentials SET changed_version = stamp WHERE id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER credentials_inserted AFTER INSERT ON credentials
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.owner <> 'session') EXECUTE FUNCTION credential_changed();
-- The stamp's own update changes changed_version, which no other write does: not stamped again.
CREATE CONSTRAINT TRIGGER credentials_updated AFTER UPDATE ON credentials
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.changed_version = NEW.changed_version AND (OLD.owner <> 'session' OR NEW.owner <> 'session'))
    EXECUTE FUNCTION credential_changed();
CREATE CONSTRAINT TRIGGER credentials_deleted AFTER DELETE ON credentials
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.owner <> 'session') EXECUTE FUNCTION credential_changed();
