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
/// decisions, and with no load a batch of one goes out at once. Another writer joins only when
/// a batch's worth (`extraWriterBatch`) is waiting, and leaves when less is: a batch costs
/// PostgreSQL about as much as ten decisions, so writers splitting a queue into small batches
/// cost more than one writer does, while a queue that outgrows one writer is written on two
/// connections at once (one batch's fsync overlapping the next batch's work).
///
/// Each decision commits only if the state it was decided from is still current (the tenant's
/// and session's state versions, for a decision that asked the policy no answer remembered by the
/// session meanwhile, and the credential's failures when the record expects some); one that lost
/// that race comes back `.stale`, and one whose session has ended by the database's clock
/// `.sessionEnded`. How the batch is checked and locked is described with `record_decisions` in
/// migrations/0006_decision_batches.sql (and 0019 for the ended sessions).
public final class DecisionWriter: Sendable {
    private struct Pending {
        var record: DecisionRecord
        /// Unchecked: `drain` resumes each pending decision exactly once (with its result, or the
        /// batch's error), and the checked kind's bookkeeping showed up in every decision.
        var continuation: UnsafeContinuation<DecisionCommit, any Error>
    }

    private struct State {
        var queue: [Pending] = []
        var activeWriters = 0
    }

    private let pool: PostgresPool
    private let logger: Logger
    private let maximumBatch: Int
    private let maximumWriters: Int
    private let extraWriterBatch: Int
    private let state = Mutex(State())
    private let batchRowOID = Mutex<UInt32?>(nil)
    private let batchSizes = Recorder(label: "countersign_decision_batch_size")

    /// `maximumWriters` batches may be in flight at once, each on its own connection.
    public init(pool: PostgresPool, logger: Logger, maximumBatch: Int = 256, maximumWriters: Int = 2, extraWriterBatch: Int = 16) {
        self.pool = pool
        self.logger = logger
        self.maximumBatch = maximumBatch
        self.maximumWriters = maximumWriters
        self.extraWriterBatch = extraWriterBatch
    }

    /// Records `record` and returns once it is committed, or says it is stale.
    public func record(_ record: DecisionRecord) async throws -> DecisionCommit {
        guard record.plan.pending == nil else {
            // A plan still waiting for an evaluation is not an answer; recording it would be a bug.
            throw CountersignError(.internalError, "a decision with a pending evaluation cannot be recorded")
        }
        return try await withUnsafeThrowingContinuation { continuation in
            let startWriter = state.withLock { state in
                state.queue.append(Pending(record: record, continuation: continuation))
                guard state.activeWriters == 0 || (state.activeWriters < maximumWriters && state.queue.count >= extraWriterBatch) else {
                    return false
                }
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
                // Little waiting while another writer is busy: that one takes it, in one batch.
                guard !state.queue.isEmpty, state.activeWriters == 1 || state.queue.count >= extraWriterBatch else {
                    state.activeWriters -= 1
                    return []
                }
                let batch = Array(state.queue.prefix(maximumBatch))
                state.queue.removeFirst(batch.count)
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

    /// One call of `record_decisions` (migrations/0006_decision_batches.sql, 0009 and 0019), which
    /// locks the batch's sessions and tenants, keeps the decisions whose state is still current,
    /// inserts them and their session memory, and reads the released credentials' failures and
    /// whether each session is live: one statement, so one round trip and one transaction.
    private func write(_ records: [DecisionRecord]) async throws -> [DecisionCommit] {
        do {
            return try await writeBatch(records)
        } catch let error as PostgresError where error.sqlState == "42804" {
            // The type's OID changed under us (the database was recreated): read it again next time.
            batchRowOID.withLock { $0 = nil }
            throw error
        }
    }

    private func writeBatch(_ records: [DecisionRecord]) async throws -> [DecisionCommit] {
        try await pool.withConnection { connection in
            let parameters: [PostgresValue] = [
                Self.rows(records, type: try self.batchRowType(connection)),
                .textArray(Set(records.map(\.sessionID)).map(\.text)),
                .textArray(Set(records.map(\.tenantID)).map(\.text)),
                .bool(records.contains { $0.plan.rememberInSession }),
                Self.expectedFailures(records),
            ]
            var commits = [DecisionCommit](repeating: .stale, count: records.count)
            for row in try connection.query(
                "SELECT batch_index, recorded, failures, session_live FROM record_decisions($1::decision_batch_row[], $2::uuid[], $3::uuid[], $4::boolean, $5::int[])",
                parameters
            ).rows {
                let index: Int = try row.decode("batch_index")
                if try row.decode("recorded", as: Bool.self) {
                    commits[index] = .recorded(failures: try row.decode("failures"))
                } else if try !row.decode("session_live", as: Bool.self) {
                    commits[index] = .sessionEnded
                }
            }
            return commits
        }
    }

    /// The OID of `decision_batch_row`, which the batch's binary form names; the database's
    /// own, so read once.
    private func batchRowType(_ connection: PostgresConnection) throws -> UInt32 {
        if let known = batchRowOID.withLock({ $0 }) { return known }
        let oid = try Self.batchRowType(connection)
        batchRowOID.withLock { $0 = oid }
        return oid
    }

    static func batchRowType(_ connection: PostgresConnection) throws -> UInt32 {
        guard let oid = try connection.query("SELECT 'decision_batch_row'::regtype::oid::int8 AS oid").first?.decode("oid", as: Int64.self) else {
            throw CountersignError(.internalError, "the type decision_batch_row is missing; are the migrations applied?")
        }
        return UInt32(oid)
    }

    /// The batch as `record_decisions` reads it: an array of `decision_batch_row` (whose OID is
    /// `type`), the fields in the order that type declares them (migrations/0006_decision_batches.sql).
    static func rows(_ records: [DecisionRecord], type: UInt32) -> PostgresValue {
        var rows = PostgresRecordArray(elementType: type)
        for (index, record) in records.enumerated() {
            let plan = record.plan
            rows.startRecord()
            rows.add(int4: index)
            rows.add(uuid: record.id)
            rows.add(uuid: record.tenantID)
            rows.add(uuid: record.sessionID)
            rows.add(text: record.clientID)
            rows.add(uuid: record.keyID)
            rows.add(text: record.taskID)
            rows.add(text: record.kind)
            rows.add(text: record.spaceKey)
            rows.add(text: record.space.host)
            rows.add(int4: record.space.port)
            rows.add(text: record.space.protocolName)
            rows.add(text: record.space.realm)
            rows.add(text: record.space.method.rawValue)
            rows.add(bool: record.space.isProxy)
            rows.add(int4: record.previousFailureCount)
            rows.add(text: plan.disposition.rawValue)
            rows.add(text: plan.persistence.rawValue)
            rows.add(text: plan.scope.rawValue)
            rows.add(text: plan.source.rawValue)
            rows.add(text: plan.reason)
            rows.add(text: plan.rule?.id)
            rows.add(text: plan.rule?.name)
            rows.add(uuid: plan.credential?.id)
            rows.add(text: record.releasedUser)
            rows.add(int4: plan.maxFailures)
            rows.add(int4: plan.blockSchedule?.seconds)
            rows.add(int4: plan.blockSchedule?.incrementSeconds)
            rows.add(int4: plan.blockSchedule?.maximumSeconds)
            rows.add(timestamptz: plan.blockedUntil)
            rows.add(int8: record.tenantStateVersion)
            rows.add(int8: record.sessionStateVersion)
            rows.add(bool: (plan.source == .policy || plan.source == .noMatchingRule) && !plan.passedOverMemory)
            rows.add(text: record.memoryKey)
            rows.add(jsonb: plan.memoryEntry(spaceKey: record.spaceKey).map(memoryJSON))
        }
        return rows.value
    }

    /// The failures each decision expects, by batch index (migrations/0009): null when none does,
    /// as nearly every batch.
    static func expectedFailures(_ records: [DecisionRecord]) -> PostgresValue {
        guard records.contains(where: { $0.expectedFailures != nil }) else { return .null }
        return .text("{" + records.map { $0.expectedFailures.map(String.init) ?? "NULL" }.joined(separator: ",") + "}")
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
        row.add("block_seconds", entry.blockSchedule?.seconds)
        row.add("block_increment_seconds", entry.blockSchedule?.incrementSeconds)
        row.add("max_block_seconds", entry.blockSchedule?.maximumSeconds)
        row.add("blocked_disposition", entry.blockedDisposition?.rawValue)
        row.add("trust_evaluation", json: entry.trust.flatMap(trustJSON))
        return row.text
    }

    /// A remembered server-trust evaluation as JSON, with the timestamps `DecisionStateStore`
    /// reads back.
    static func trustJSON(_ verdict: ServerTrustVerdict) -> String? {
        try? APIJSONEncoder().text(verdict)
    }
}
