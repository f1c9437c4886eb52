-- What changed in a tenant's credentials since a state version, so that a cached tenant state
-- is brought up to date by reading those rows, not every credential: a block, a saved credential
-- or a client's permanent one reloaded all of a large tenant's (about 150 ms at 22,000), and
-- every decision of the tenant waited for it.
--
-- Each write of a credential in the tenant's set (every owner but 'session') bumps the tenant's
-- state version and stamps the row, or a removal's record, with the bumped value. The trigger is
-- deferred to the commit: the tenant's row is then locked last, as every transaction here locks
-- it (sessions, decisions, credentials, counters, tenants), and held until the commit ends, so a
-- tenant's stamps are handed out in commit order. A state read at version V holds every row
-- stamped V or lower, and what it lacks is stamped above V.
ALTER TABLE credentials ADD COLUMN changed_version bigint NOT NULL DEFAULT 0;
CREATE INDEX credentials_changed ON credentials (tenant_id, changed_version);

-- Kept a day (`PeriodicSweep.credentialRemovals`); a cached state older than that is read whole.
-- No foreign key: the tenant may be gone (its removals are swept alike).
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
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.owner <> 'session' THEN
            UPDATE tenants SET state_version = state_version + 1 WHERE id = OLD.tenant_id RETURNING state_version INTO stamp;
            -- Not found when the tenant's own deletion removes its credentials.
            IF FOUND THEN
                INSERT INTO credential_removals (tenant_id, credential_id, changed_version) VALUES (OLD.tenant_id, OLD.id, stamp);
            END IF;
        END IF;
        RETURN NULL;
    END IF;
    -- A row moving into or out of a session's hands changes the tenant's set too.
    IF NEW.owner <> 'session' OR (TG_OP = 'UPDATE' AND OLD.owner <> 'session') THEN
        UPDATE tenants SET state_version = state_version + 1 WHERE id = NEW.tenant_id RETURNING state_version INTO stamp;
        -- Nothing when the row was deleted later in the transaction (its removal is recorded).
        UPDATE credentials SET changed_version = stamp WHERE id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;

-- The stamp's own update (from inside the trigger) is no change to stamp again.
CREATE CONSTRAINT TRIGGER credentials_changed AFTER INSERT OR UPDATE OR DELETE ON credentials
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION credential_changed();
