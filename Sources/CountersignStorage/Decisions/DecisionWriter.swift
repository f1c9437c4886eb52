public import CountersignCore
public import CountersignPostgres
public import Foundation
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
        try await withCheckedThrowingContinuation { continuation in
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
                    [.json(try Self.json(askedPolicy.map { ["session_id": $0.sessionID.uuidString.lowercased(), "space_key": $0.space.key] }))]
                ).rows {
                    remembered.insert("\(try row.decode("session_id", as: UUID.self))|\(try row.decode("space_key", as: String.self))")
                }
                for (index, record) in records.enumerated() where current[index] && remembered.contains("\(record.sessionID)|\(record.space.key)") {
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
                [.json(try Self.json(accepted.map(DecisionRow.init)))]
            )

            var memory: [String: MemoryRow] = [:]
            for record in accepted {
                guard let entry = record.plan.memoryEntry(spaceKey: record.space.key) else { continue }
                memory["\(record.sessionID)|\(entry.spaceKey)"] = MemoryRow(sessionID: record.sessionID, entry: entry)
            }
            if !memory.isEmpty {
                try connection.execute(
                    """
                    INSERT INTO session_memory (session_id, space_key, disposition, credential_id, persistence, rule_id, rule_name,
                        max_failures, blocked_disposition)
                    SELECT m.session_id, m.space_key, m.disposition, m.credential_id, m.persistence, m.rule_id, m.rule_name,
                        m.max_failures, m.blocked_disposition
                    FROM jsonb_to_recordset($1::jsonb) AS m(session_id uuid, space_key text, disposition text, credential_id uuid,
                        persistence text, rule_id text, rule_name text, max_failures int, blocked_disposition text)
                    ON CONFLICT (session_id, space_key) DO NOTHING
                    """,
                    [.json(try Self.json(Array(memory.values)))]
                )
            }

            var failures: [String: Int] = [:]
            let released = accepted.compactMap { record in record.plan.credential.map { ($0.id, record.space.key) } }
            if !released.isEmpty {
                for row in try connection.query(
                    """
                    SELECT rc.credential_id, rc.space_key, rc.failures FROM rejection_counters rc
                    JOIN jsonb_to_recordset($1::jsonb) AS r(credential_id uuid, space_key text)
                      ON rc.credential_id = r.credential_id AND rc.space_key = r.space_key
                    """,
                    [.json(try Self.json(released.map { ["credential_id": $0.0.uuidString.lowercased(), "space_key": $0.1] }))]
                ).rows {
                    failures["\(try row.decode("credential_id", as: UUID.self))|\(try row.decode("space_key", as: String.self))"] = try row.decode("failures")
                }
            }
            return zip(records, current).map { record, current in
                guard current else { return .stale }
                let key = record.plan.credential.map { "\($0.id)|\(record.space.key)" }
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

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        return encoder
    }()

    private static func json(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// A decision as the `decisions` columns want it, for `jsonb_to_recordset`.
private struct DecisionRow: Encodable {
    var id: UUID
    var tenant_id: UUID
    var session_id: UUID
    var client_id: String
    var key_id: UUID
    var task_id: String
    var kind: String
    var space_key: String
    var host: String
    var port: Int
    var `protocol`: String?
    var realm: String?
    var authentication_method: String
    var is_proxy: Bool
    var previous_failure_count: Int
    var disposition: String
    var persistence: String
    var scope: String
    var source: String
    var reason: String
    var rule_id: String?
    var rule_name: String?
    var credential_id: UUID?
    var released_user: String?
    var max_failures: Int?
    var block_seconds: Int?
    var block_increment_seconds: Int?
    var max_block_seconds: Int?
    var blocked_until: Date?

    init(_ record: DecisionRecord) {
        let plan = record.plan
        id = record.id
        tenant_id = record.tenantID
        session_id = record.sessionID
        client_id = record.clientID
        key_id = record.keyID
        task_id = record.taskID
        kind = record.kind
        space_key = record.space.key
        host = record.space.host
        port = record.space.port
        `protocol` = record.space.protocolName
        realm = record.space.realm
        authentication_method = record.space.method.rawValue
        is_proxy = record.space.isProxy
        previous_failure_count = record.previousFailureCount
        disposition = plan.disposition.rawValue
        persistence = plan.persistence.rawValue
        scope = plan.scope.rawValue
        source = plan.source.rawValue
        reason = plan.reason
        rule_id = plan.rule?.id
        rule_name = plan.rule?.name
        credential_id = plan.credential?.id
        released_user = record.releasedUser
        max_failures = plan.maxFailures
        block_seconds = plan.blockSchedule?.seconds
        block_increment_seconds = plan.blockSchedule?.incrementSeconds
        max_block_seconds = plan.blockSchedule?.maximumSeconds
        blocked_until = plan.blockedUntil
    }
}

/// A session-memory row for `jsonb_to_recordset`.
private struct MemoryRow: Encodable {
    var session_id: UUID
    var space_key: String
    var disposition: String
    var credential_id: UUID?
    var persistence: String
    var rule_id: String?
    var rule_name: String?
    var max_failures: Int?
    var blocked_disposition: String?

    init(sessionID: UUID, entry: SessionMemoryEntry) {
        session_id = sessionID
        space_key = entry.spaceKey
        disposition = entry.disposition.rawValue
        credential_id = entry.credentialID
        persistence = entry.persistence.rawValue
        rule_id = entry.ruleID
        rule_name = entry.ruleName
        max_failures = entry.maxFailures
        blocked_disposition = entry.blockedDisposition?.rawValue
    }
}
