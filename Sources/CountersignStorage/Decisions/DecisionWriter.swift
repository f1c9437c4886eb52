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
/// Each decision commits only if the state it was decided from is still current (the tenant's
/// and session's state versions, and for a decision that asked the policy, no answer remembered
/// by the session meanwhile); one that lost that race comes back `.stale`. How the batch is
/// checked and locked is described with `record_decisions` in migrations/0006_decision_batches.sql.
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

    /// One call of `record_decisions` (migrations/0006_decision_batches.sql), which locks the
    /// batch's sessions and tenants, keeps the decisions whose state is still current, inserts
    /// them and their session memory, and reads the released credentials' failures: one
    /// statement, so one round trip and one transaction.
    private func write(_ records: [DecisionRecord]) async throws -> [DecisionCommit] {
        let parameters: [PostgresValue] = [
            .json(Self.rows(records)),
            .textArray(Set(records.map(\.sessionID)).map(\.text)),
            .textArray(Set(records.map(\.tenantID)).map(\.text)),
            .bool(records.contains { $0.plan.rememberInSession }),
        ]
        return try await pool.withConnection { connection in
            var commits = [DecisionCommit](repeating: .stale, count: records.count)
            for row in try connection.query(
                "SELECT batch_index, recorded, failures FROM record_decisions($1::jsonb, $2::uuid[], $3::uuid[], $4::boolean)",
                parameters
            ).rows where try row.decode("recorded", as: Bool.self) {
                commits[try row.decode("batch_index")] = .recorded(failures: try row.decode("failures"))
            }
            return commits
        }
    }

    /// The batch as `record_decisions` reads it: built by hand, as this runs for every decision
    /// and JSONEncoder would cost more than the insert.
    static func rows(_ records: [DecisionRecord]) -> String {
        var rows = JSONArrayText()
        for (index, record) in records.enumerated() {
            let plan = record.plan
            var row = JSONObjectText()
            row.add("batch_index", index)
            row.add("tenant_version", record.tenantStateVersion)
            row.add("session_version", record.sessionStateVersion)
            row.add("asks_policy", plan.source == .policy || plan.source == .noMatchingRule)
            row.add("memory_key", record.memoryKey)
            row.add("memory", json: plan.memoryEntry(spaceKey: record.spaceKey).map(memoryJSON))
            row.add("id", record.id.text)
            row.add("tenant_id", record.tenantID.text)
            row.add("session_id", record.sessionID.text)
            row.add("client_id", record.clientID)
            row.add("key_id", record.keyID.text)
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
            row.add("credential_id", plan.credential?.id.text)
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

    /// The answer a session remembers, as `record_decisions` reads it.
    static func memoryJSON(_ entry: SessionMemoryEntry) -> String {
        var row = JSONObjectText()
        row.add("space_key", entry.spaceKey)
        row.add("disposition", entry.disposition.rawValue)
        row.add("credential_id", entry.credentialID?.text)
        row.add("persistence", entry.persistence.rawValue)
        row.add("rule_id", entry.ruleID)
        row.add("rule_name", entry.ruleName)
        row.add("max_failures", entry.maxFailures)
        row.add("blocked_disposition", entry.blockedDisposition?.rawValue)
        row.add("trust_evaluation", json: entry.trust.flatMap(trustJSON))
        return row.text
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
}
