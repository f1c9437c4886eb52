import CountersignCore
public import CountersignPostgres
import Foundation
public import Logging
import Metrics
import Synchronization

/// Records decisions durably before they are answered, many per transaction (group commit).
///
/// Callers wait until the transaction holding their decision commits. While one batch is
/// being written the next fills up, so under load each commit (and its fsync) carries many
/// decisions, and with no load a batch of one goes out at once.
///
/// Each decision commits only if the state it was decided from is still current: the
/// transaction locks the tenant rows `FOR SHARE` and the session rows `FOR NO KEY UPDATE`,
/// which every change to that state (policy, credentials, blocks, session memory,
/// invalidation) updates, and compares their state versions with the decision's. A decision
/// that lost that race comes back `.stale`. Remembering an answer in a session's memory does
/// not bump the session's version (see `write`): a decision that asked the policy is stale
/// when the session meanwhile remembered an answer for its protection space. A batch that
/// remembers an answer locks its sessions for update, so that the batches remembering in one
/// session take turns (the memory check and insert must not interleave); the others share the
/// rows, so that batches of one busy session still commit side by side.
public final class DecisionWriter: Sendable {
    private struct Pending {
        var record: DecisionRecord
        var continuation: CheckedContinuation<DecisionCommit, any Error>
    }

    private struct State {
        var queue: [Pending] = []
        var activeWriters = 0
    }

    private let pool: PostgresPool
    private let logger: Logger
    private let maximumBatch: Int
    private let maximumWriters: Int
    private let state = Mutex(State())
    private let batchSizes = Recorder(label: "countersign_decision_batch_size")

    /// `maximumWriters` batches may be in flight at once, each on its own connection.
    public init(pool: PostgresPool, logger: Logger, maximumBatch: Int = 256, maximumWriters: Int = 2) {
        self.pool = pool
        self.logger = logger
        self.maximumBatch = maximumBatch
        self.maximumWriters = maximumWriters
    }

    /// Records `record` and returns once it is committed, or says it is stale.
    public func record(_ record: DecisionRecord) async throws -> DecisionCommit {
        guard record.plan.pending == nil else {
            // A plan still waiting for an evaluation is not an answer; recording it would be a bug.
            throw CountersignError(.internalError, "a decision with a pending evaluation cannot be recorded")
        }
        return try await withCheckedThrowingContinuation { continuation in
            let startWriter = state.withLock { state in
                state.queue.append(Pending(record: record, continuation: continuation))
                guard state.activeWriters < maximumWriters else { return false }
                state.activeWriters += 1
                return true
            }
            if startWriter {
                Task { await self.drain() }
            }
        }
    }

    private func drain() async {
        while true {
            let batch: [Pending] = state.withLock { state in
                let batch = Array(state.queue.prefix(maximumBatch))
                state.queue.removeFirst(batch.count)
                if batch.isEmpty { state.activeWriters -= 1 }
                return batch
            }
            guard !batch.isEmpty else { return }
            batchSizes.record(batch.count)
            do {
                let results = try await writeRetryingConflicts(batch.map(\.record))
                for (pending, result) in zip(batch, results) { pending.continuation.resume(returning: result) }
            } catch {
                logger.warning("decision batch not recorded", metadata: ["decisions": "\(batch.count)", "error": "\(error)"])
                for pending in batch { pending.continuation.resume(throwing: error) }
            }
        }
    }

    /// A deadlock or serialization failure aborts the whole batch without recording anything;
    /// writing it again is safe and is what every caller in it wants.
    private func writeRetryingConflicts(_ records: [DecisionRecord]) async throws -> [DecisionCommit] {
        var attempt = 0
        while true {
            do {
                return try await write(records)
            } catch let error as PostgresError where (error.isDeadlockDetected || error.isSerializationFailure) && attempt < 3 {
                attempt += 1
                logger.debug("decision batch conflicted; writing it again", metadata: ["attempt": "\(attempt)"])
            }
        }
    }

    private func write(_ records: [DecisionRecord]) async throws -> [DecisionCommit] {
        try await pool.withTransaction { connection in
            // Locks in the order every transaction here takes them: sessions, decisions, counters,
            // tenants.
            let remembers = records.contains { $0.plan.rememberInSession }
            let sessionVersions = try Self.versions(
                """
                SELECT id, state_version, invalidated_at IS NULL AND expires_at > now() AS active
                FROM sessions WHERE id = ANY($1::uuid[]) ORDER BY id \(remembers ? "FOR NO KEY UPDATE" : "FOR SHARE")
                """,
                ids: Set(records.map(\.sessionID)),
                on: connection
            )
            let tenantVersions = try Self.versions(
                "SELECT id, state_version, true AS active FROM tenants WHERE id = ANY($1::uuid[]) ORDER BY id FOR SHARE",
                ids: Set(records.map(\.tenantID)),
                on: connection
            )
            var current = records.map { record in
                tenantVersions[record.tenantID] == record.tenantStateVersion && sessionVersions[record.sessionID] == record.sessionStateVersion
            }
            // The session's memory grows without bumping its version (so that one task's answer
            // does not make every other task's decision stale); instead a decision that asked
            // the policy is stale if the session has meanwhile remembered an answer for its space,
            // which it must now serve (perhaps written by another instance).
            let askedPolicy = zip(records, current).filter { record, current in
                current && (record.plan.source == .policy || record.plan.source == .noMatchingRule)
            }.map(\.0)
            if !askedPolicy.isEmpty {
                var remembered = Set<String>()
                for row in try connection.query(
                    """
                    SELECT m.session_id, m.space_key FROM session_memory m
                    JOIN jsonb_to_recordset($1::jsonb) AS r(session_id uuid, space_key text)
                      ON m.session_id = r.session_id AND m.space_key = r.space_key
                    """,
                    [.json(Self.keyRows(askedPolicy.map { ("session_id", $0.sessionID, $0.memoryKey) }))]
                ).rows {
                    remembered.insert("\(try row.decode("session_id", as: UUID.self))|\(try row.decode("space_key", as: String.self))")
                }
                for (index, record) in records.enumerated() where current[index] && remembered.contains("\(record.sessionID)|\(record.memoryKey)") {
                    current[index] = false
                }
            }
            let accepted = zip(records, current).filter(\.1).map(\.0)
            guard !accepted.isEmpty else { return records.map { _ in .stale } }

            try connection.execute(
                """
                INSERT INTO decisions (id, tenant_id, session_id, client_id, key_id, task_id, kind, space_key, host, port, protocol,
                    realm, authentication_method, is_proxy, previous_failure_count, disposition, persistence, scope, source,
                    reason, rule_id, rule_name, credential_id, released_user, max_failures, block_seconds,
                    block_increment_seconds, max_block_seconds, blocked_until)
                SELECT d.id, d.tenant_id, d.session_id, d.client_id, d.key_id, d.task_id, d.kind, d.space_key, d.host, d.port,
                    d.protocol, d.realm, d.authentication_method, d.is_proxy, d.previous_failure_count, d.disposition,
                    d.persistence, d.scope, d.source, d.reason, d.rule_id, d.rule_name, d.credential_id, d.released_user,
                    d.max_failures, d.block_seconds, d.block_increment_seconds, d.max_block_seconds, d.blocked_until
                FROM jsonb_to_recordset($1::jsonb) AS d(id uuid, tenant_id uuid, session_id uuid, client_id text, key_id uuid,
                    task_id text, kind text, space_key text, host text, port int, protocol text, realm text,
                    authentication_method text, is_proxy boolean, previous_failure_count int, disposition text,
                    persistence text, scope text, source text, reason text, rule_id text, rule_name text, credential_id uuid,
                    released_user text, max_failures int, block_seconds int, block_increment_seconds int,
                    max_block_seconds int, blocked_until timestamptz)
                """,
                [.json(Self.rows(accepted))]
            )

            var memory: [String: (sessionID: UUID, entry: SessionMemoryEntry)] = [:]
            for record in accepted {
                guard let entry = record.plan.memoryEntry(spaceKey: record.spaceKey) else { continue }
                memory["\(record.sessionID)|\(entry.spaceKey)"] = (record.sessionID, entry)
            }
            if !memory.isEmpty {
                try connection.execute(
                    """
                    INSERT INTO session_memory (session_id, space_key, disposition, credential_id, persistence, rule_id, rule_name,
                        max_failures, blocked_disposition, trust_evaluation)
                    SELECT m.session_id, m.space_key, m.disposition, m.credential_id, m.persistence, m.rule_id, m.rule_name,
                        m.max_failures, m.blocked_disposition, m.trust_evaluation
                    FROM jsonb_to_recordset($1::jsonb) AS m(session_id uuid, space_key text, disposition text, credential_id uuid,
                        persistence text, rule_id text, rule_name text, max_failures int, blocked_disposition text,
                        trust_evaluation jsonb)
                    ON CONFLICT (session_id, space_key) DO NOTHING
                    """,
                    [.json(Self.memoryRows(Array(memory.values)))]
                )
            }

            var failures: [String: Int] = [:]
            let released = accepted.compactMap { record in record.plan.credential.map { ($0.id, record.spaceKey) } }
            if !released.isEmpty {
                for row in try connection.query(
                    """
                    SELECT rc.credential_id, rc.space_key, rc.failures FROM rejection_counters rc
                    JOIN jsonb_to_recordset($1::jsonb) AS r(credential_id uuid, space_key text)
                      ON rc.credential_id = r.credential_id AND rc.space_key = r.space_key
                    """,
                    [.json(Self.keyRows(released.map { ("credential_id", $0.0, $0.1) }))]
                ).rows {
                    failures["\(try row.decode("credential_id", as: UUID.self))|\(try row.decode("space_key", as: String.self))"] = try row.decode("failures")
                }
            }
            return zip(records, current).map { record, current in
                guard current else { return .stale }
                let key = record.plan.credential.map { "\($0.id)|\(record.spaceKey)" }
                return .recorded(failures: key.flatMap { failures[$0] } ?? 0)
            }
        }
    }

    private static func versions(_ sql: String, ids: Set<UUID>, on connection: PostgresConnection) throws -> [UUID: Int64] {
        var versions: [UUID: Int64] = [:]
        for row in try connection.query(sql, [.textArray(ids.map { $0.uuidString.lowercased() })]).rows where try row.decode("active", as: Bool.self) {
            versions[try row.decode("id")] = try row.decode("state_version")
        }
        return versions
    }

    /// The decisions as a JSON array for `jsonb_to_recordset`: built by hand, as this runs for
    /// every decision and JSONEncoder would cost more than the insert.
    static func rows(_ records: [DecisionRecord]) -> String {
        var rows = JSONArrayText()
        for record in records {
            let plan = record.plan
            var row = JSONObjectText()
            row.add("id", record.id.uuidString)
            row.add("tenant_id", record.tenantID.uuidString)
            row.add("session_id", record.sessionID.uuidString)
            row.add("client_id", record.clientID)
            row.add("key_id", record.keyID.uuidString)
            row.add("task_id", record.taskID)
            row.add("kind", record.kind)
            row.add("space_key", record.spaceKey)
            row.add("host", record.space.host)
            row.add("port", record.space.port)
            row.add("protocol", record.space.protocolName)
            row.add("realm", record.space.realm)
            row.add("authentication_method", record.space.method.rawValue)
            row.add("is_proxy", record.space.isProxy)
            row.add("previous_failure_count", record.previousFailureCount)
            row.add("disposition", plan.disposition.rawValue)
            row.add("persistence", plan.persistence.rawValue)
            row.add("scope", plan.scope.rawValue)
            row.add("source", plan.source.rawValue)
            row.add("reason", plan.reason)
            row.add("rule_id", plan.rule?.id)
            row.add("rule_name", plan.rule?.name)
            row.add("credential_id", plan.credential?.id.uuidString)
            row.add("released_user", record.releasedUser)
            row.add("max_failures", plan.maxFailures)
            row.add("block_seconds", plan.blockSchedule?.seconds)
            row.add("block_increment_seconds", plan.blockSchedule?.incrementSeconds)
            row.add("max_block_seconds", plan.blockSchedule?.maximumSeconds)
            row.add("blocked_until", plan.blockedUntil.map { $0.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) })
            rows.append(row)
        }
        return rows.text
    }

    /// Session-memory rows for `jsonb_to_recordset`.
    static func memoryRows(_ entries: [(sessionID: UUID, entry: SessionMemoryEntry)]) -> String {
        var rows = JSONArrayText()
        for (sessionID, entry) in entries {
            var row = JSONObjectText()
            row.add("session_id", sessionID.uuidString)
            row.add("space_key", entry.spaceKey)
            row.add("disposition", entry.disposition.rawValue)
            row.add("credential_id", entry.credentialID?.uuidString)
            row.add("persistence", entry.persistence.rawValue)
            row.add("rule_id", entry.ruleID)
            row.add("rule_name", entry.ruleName)
            row.add("max_failures", entry.maxFailures)
            row.add("blocked_disposition", entry.blockedDisposition?.rawValue)
            row.add("trust_evaluation", json: entry.trust.flatMap(trustJSON))
            rows.append(row)
        }
        return rows.text
    }

    /// A remembered server-trust evaluation as JSON (rare enough for JSONEncoder), with the
    /// timestamps `DecisionStateStore` reads back.
    static func trustJSON(_ verdict: ServerTrustVerdict) -> String? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        return (try? encoder.encode(verdict)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `(id column, id, space_key)` pairs for `jsonb_to_recordset`.
    static func keyRows(_ pairs: [(column: String, id: UUID, spaceKey: String)]) -> String {
        var rows = JSONArrayText()
        for pair in pairs {
            var row = JSONObjectText()
            row.add(pair.column, pair.id.uuidString)
            row.add("space_key", pair.spaceKey)
            rows.append(row)
        }
        return rows.text
    }
}
