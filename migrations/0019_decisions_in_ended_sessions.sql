-- A decision whose session has ended by the database's clock is not recorded, whatever the
-- instance that made it believes: the instance checks the session's expiry against its own clock
-- first, and record_decisions then checks it against now(). When the database's clock runs ahead
-- of the instance's, a session in that gap looks live to the instance and ended to the database,
-- and the instance, told only "not recorded", took it for stale state and decided again from the
-- same session until it ran out of attempts (503 service_busy instead of 409
-- session_invalidated). record_decisions now also says, per decision, whether its session was live
-- (neither invalidated nor expired at now(), and still there), so that the database's verdict is
-- the one answered.
--
-- A new result column changes the function's type, so it is dropped and created again (in this
-- migration's transaction). Instances of the previous release name the three columns they read,
-- and keep recording while a rolling upgrade replaces them; the four-argument function of 0009
-- is given back its three columns. Everything else is as in 0012_rejections_of_replaced_secrets.sql.
DROP FUNCTION record_decisions(decision_batch_row[], uuid[], uuid[], boolean, int[]);

CREATE FUNCTION record_decisions(batch decision_batch_row[], session_ids uuid[], tenant_ids uuid[], remembers boolean, expected_failures int[])
RETURNS TABLE (batch_index int, recorded boolean, failures int, session_live boolean)
LANGUAGE plpgsql
-- Every batch has the same shape, so the statements below need no plan of their own per call;
-- planning them anew cost a tenth of the whole call.
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    live_sessions uuid[];
    live_session_versions bigint[];
    live_tenants uuid[];
    live_tenant_versions bigint[];
BEGIN
    -- Locks in the order every transaction takes them: sessions, decisions, counters, tenants.
    IF remembers THEN
        SELECT coalesce(array_agg(s.id), '{}'), coalesce(array_agg(s.state_version), '{}')
        INTO live_sessions, live_session_versions
        FROM (SELECT id, state_version, invalidated_at, expires_at FROM sessions
              WHERE id = ANY(session_ids) ORDER BY id FOR NO KEY UPDATE) s
        WHERE s.invalidated_at IS NULL AND s.expires_at > now();
    ELSE
        SELECT coalesce(array_agg(s.id), '{}'), coalesce(array_agg(s.state_version), '{}')
        INTO live_sessions, live_session_versions
        FROM (SELECT id, state_version, invalidated_at, expires_at FROM sessions
              WHERE id = ANY(session_ids) ORDER BY id FOR SHARE) s
        WHERE s.invalidated_at IS NULL AND s.expires_at > now();
    END IF;
    SELECT coalesce(array_agg(t.id), '{}'), coalesce(array_agg(t.state_version), '{}')
    INTO live_tenants, live_tenant_versions
    FROM (SELECT id, state_version FROM tenants WHERE id = ANY(tenant_ids) ORDER BY id FOR SHARE) t;

    RETURN QUERY
    WITH input AS (
        SELECT * FROM unnest(batch)
    ), verdict AS (
        -- Array lookups rather than joins: a batch has a handful of sessions and tenants, and a
        -- hash join would build two tables per batch for them.
        SELECT i.*, (
            live_tenant_versions[array_position(live_tenants, i.tenant_id)] IS NOT DISTINCT FROM i.tenant_version
            AND live_session_versions[array_position(live_sessions, i.session_id)] IS NOT DISTINCT FROM i.session_version
            AND NOT (i.asks_policy AND EXISTS (
                SELECT 1 FROM session_memory m WHERE m.session_id = i.session_id AND m.space_key = i.memory_key))
            AND (expected_failures[i.batch_index + 1] IS NULL OR expected_failures[i.batch_index + 1] = coalesce((
                SELECT rc.failures FROM rejection_counters rc
                WHERE rc.tenant_id = i.tenant_id AND rc.credential_id = i.credential_id AND rc.space_key = i.space_key), 0))
        ) AS is_current
        FROM input i
    ), inserted AS (
        INSERT INTO decisions (id, tenant_id, session_id, client_id, key_id, task_id, kind, space_key, host, port,
            protocol, realm, authentication_method, is_proxy, previous_failure_count, disposition, persistence, scope,
            source, reason, rule_id, rule_name, credential_id, released_user, max_failures, block_seconds,
            block_increment_seconds, max_block_seconds, blocked_until, tenant_version)
        SELECT v.id, v.tenant_id, v.session_id, v.client_id, v.key_id, v.task_id, v.kind, v.space_key, v.host, v.port,
            v.protocol, v.realm, v.authentication_method, v.is_proxy, v.previous_failure_count, v.disposition,
            v.persistence, v.scope, v.source, v.reason, v.rule_id, v.rule_name, v.credential_id, v.released_user,
            v.max_failures, v.block_seconds, v.block_increment_seconds, v.max_block_seconds, v.blocked_until,
            v.tenant_version
        FROM verdict v WHERE v.is_current
    ), remembered AS (
        -- One answer per session and space: the batch's last, as a later decision would find it.
        INSERT INTO session_memory (session_id, space_key, disposition, credential_id, persistence, rule_id,
            rule_name, max_failures, blocked_disposition, trust_evaluation, block_seconds, block_increment_seconds,
            max_block_seconds)
        SELECT DISTINCT ON (v.session_id, v.memory ->> 'space_key')
            v.session_id, v.memory ->> 'space_key', v.memory ->> 'disposition', (v.memory ->> 'credential_id')::uuid,
            v.memory ->> 'persistence', v.memory ->> 'rule_id', v.memory ->> 'rule_name',
            (v.memory ->> 'max_failures')::int, v.memory ->> 'blocked_disposition',
            nullif(v.memory -> 'trust_evaluation', 'null'::jsonb), (v.memory ->> 'block_seconds')::int,
            (v.memory ->> 'block_increment_seconds')::int, (v.memory ->> 'max_block_seconds')::int
        FROM verdict v WHERE v.is_current AND v.memory IS NOT NULL AND v.memory <> 'null'::jsonb
        ORDER BY v.session_id, v.memory ->> 'space_key', v.batch_index DESC
        ON CONFLICT (session_id, space_key) DO NOTHING
    )
    SELECT v.batch_index, v.is_current, coalesce((
        SELECT rc.failures FROM rejection_counters rc
        WHERE v.is_current AND rc.tenant_id = v.tenant_id AND rc.credential_id = v.credential_id AND rc.space_key = v.space_key
    ), 0), array_position(live_sessions, v.session_id) IS NOT NULL
    FROM verdict v
    ORDER BY v.batch_index;
END
$$;

CREATE OR REPLACE FUNCTION record_decisions(batch decision_batch_row[], session_ids uuid[], tenant_ids uuid[], remembers boolean)
RETURNS TABLE (batch_index int, recorded boolean, failures int)
LANGUAGE sql
AS $$
    SELECT r.batch_index, r.recorded, r.failures FROM record_decisions(batch, session_ids, tenant_ids, remembers, NULL::int[]) r
$$;
