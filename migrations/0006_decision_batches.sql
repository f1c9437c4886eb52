-- Decisions are recorded in batches (group commit, see DecisionWriter), each batch by one call
-- of record_decisions: one statement, so one round trip and one implicit transaction, instead
-- of a transaction of six to eight statements.

-- The decisions table is a log written only by record_decisions, which holds the tenant and
-- session rows of every decision it inserts locked (FOR SHARE or stronger) while it inserts, and
-- only for live sessions. The foreign keys' per-row triggers checked that again at a fifth of the
-- cost of the whole insert. Tenants are never deleted; sessions only long after they ended (the
-- retention sweep), and their decisions may outlive them in the log.
ALTER TABLE decisions
    DROP CONSTRAINT decisions_tenant_id_fkey,
    DROP CONSTRAINT decisions_session_id_fkey;

-- Every decision writes every index of its table, so they are kept few and small, and in
-- ascending time order: a new decision's entries then go to the right end of their range (the
-- right end of the whole index for a busy tenant, where PostgreSQL skips the descent), and the
-- newest-first reads walk them backwards. Decision ids are time-ordered (UUIDv7) for the same
-- reason. The session and task index loses the protection-space key: the lookups that use it (a
-- task's last release, its last raw response, its last security-check answer) filter the few
-- decisions of one task. It serves the security-check answers too, whose own index goes.
DROP INDEX decisions_tenant_time;
DROP INDEX decisions_session_task;
DROP INDEX decisions_tenant_credential;
DROP INDEX decisions_security_check_answers;
CREATE INDEX decisions_tenant_time ON decisions (tenant_id, created_at, id);
CREATE INDEX decisions_session_task ON decisions (session_id, task_id, created_at);
CREATE INDEX decisions_tenant_credential ON decisions (tenant_id, credential_id, created_at) WHERE credential_id IS NOT NULL;

-- One decision of a batch: the decisions columns, plus batch_index, tenant_version and
-- session_version (the state the decision was made from), asks_policy (it was decided by the
-- policy, not by the session's memory), memory_key, and memory (the answer the session remembers
-- from now on, or null). DecisionWriter.rows writes the fields in this order. A batch arrives as
-- an array of these in PostgreSQL's text form, which costs a fraction of the same rows as JSON.
CREATE TYPE decision_batch_row AS (
    batch_index int, id uuid, tenant_id uuid, session_id uuid, client_id text, key_id uuid, task_id text, kind text,
    space_key text, host text, port int, protocol text, realm text, authentication_method text, is_proxy boolean,
    previous_failure_count int, disposition text, persistence text, scope text, source text, reason text, rule_id text,
    rule_name text, credential_id uuid, released_user text, max_failures int, block_seconds int,
    block_increment_seconds int, max_block_seconds int, blocked_until timestamptz, tenant_version bigint,
    session_version bigint, asks_policy boolean, memory_key text, memory jsonb
);

-- A decision is recorded only if that state is still current: its tenant and session rows are
-- locked and their state versions compared, and a decision that asked the policy is stale when
-- the session has meanwhile remembered an answer for its space (which it must now serve;
-- remembering does not bump the session's version, so that one task's answer does not make
-- every other decision of the session stale). Each statement below takes a new snapshot after
-- the locks are held, so it sees every answer remembered by a batch that held them before.
-- A batch that remembers answers locks its sessions for update, so that batches remembering in
-- one session take turns; the others share the rows, so batches of one busy session commit side
-- by side.
--
-- Returns, per decision, whether it was recorded and the released credential's failures so far
-- for its protection space.
CREATE FUNCTION record_decisions(batch decision_batch_row[], session_ids uuid[], tenant_ids uuid[], remembers boolean)
RETURNS TABLE (batch_index int, recorded boolean, failures int)
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
        ) AS is_current
        FROM input i
    ), inserted AS (
        INSERT INTO decisions (id, tenant_id, session_id, client_id, key_id, task_id, kind, space_key, host, port,
            protocol, realm, authentication_method, is_proxy, previous_failure_count, disposition, persistence, scope,
            source, reason, rule_id, rule_name, credential_id, released_user, max_failures, block_seconds,
            block_increment_seconds, max_block_seconds, blocked_until)
        SELECT v.id, v.tenant_id, v.session_id, v.client_id, v.key_id, v.task_id, v.kind, v.space_key, v.host, v.port,
            v.protocol, v.realm, v.authentication_method, v.is_proxy, v.previous_failure_count, v.disposition,
            v.persistence, v.scope, v.source, v.reason, v.rule_id, v.rule_name, v.credential_id, v.released_user,
            v.max_failures, v.block_seconds, v.block_increment_seconds, v.max_block_seconds, v.blocked_until
        FROM verdict v WHERE v.is_current
    ), remembered AS (
        -- One answer per session and space: the batch's last, as a later decision would find it.
        INSERT INTO session_memory (session_id, space_key, disposition, credential_id, persistence, rule_id,
            rule_name, max_failures, blocked_disposition, trust_evaluation)
        SELECT DISTINCT ON (v.session_id, v.memory ->> 'space_key')
            v.session_id, v.memory ->> 'space_key', v.memory ->> 'disposition', (v.memory ->> 'credential_id')::uuid,
            v.memory ->> 'persistence', v.memory ->> 'rule_id', v.memory ->> 'rule_name',
            (v.memory ->> 'max_failures')::int, v.memory ->> 'blocked_disposition',
            nullif(v.memory -> 'trust_evaluation', 'null'::jsonb)
        FROM verdict v WHERE v.is_current AND v.memory IS NOT NULL AND v.memory <> 'null'::jsonb
        ORDER BY v.session_id, v.memory ->> 'space_key', v.batch_index DESC
        ON CONFLICT (session_id, space_key) DO NOTHING
    )
    SELECT v.batch_index, v.is_current, coalesce((
        SELECT rc.failures FROM rejection_counters rc
        WHERE v.is_current AND rc.tenant_id = v.tenant_id AND rc.credential_id = v.credential_id AND rc.space_key = v.space_key
    ), 0)
    FROM verdict v
    ORDER BY v.batch_index;
END
$$;
