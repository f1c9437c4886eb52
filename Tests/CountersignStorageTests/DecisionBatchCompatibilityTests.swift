import CountersignCore
import CountersignPostgres
@testable import CountersignStorage
import Foundation
import Testing

/// Instances of the previous release keep writing decisions while a rolling upgrade replaces
/// them: the entry points they call survive the migrations.
@Suite("Decision batches across releases")
struct DecisionBatchCompatibilityTests {
    @Test func thePreviousReleasesCallOfRecordDecisionsStillRecords() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential()
            let session = try await fixture.session()
            let record = try await fixture.releaseRecord(credential, session: session, maxFailures: 3)
            let recorded = try await fixture.pool.withConnection { connection in
                // The call as DecisionWriter made it before migrations/0009.
                try connection.query(
                    "SELECT batch_index, recorded, failures FROM record_decisions($1::decision_batch_row[], $2::uuid[], $3::uuid[], $4::boolean)",
                    [DecisionWriter.rows([record], type: try DecisionWriter.batchRowType(connection)), .textArray([record.sessionID.text]), .textArray([record.tenantID.text]), .bool(false)]
                ).rows.first?.decode("recorded", as: Bool.self)
            }
            #expect(recorded == true)
            #expect(try await fixture.decisions.get(tenantID: fixture.tenantID, id: record.id) != nil)
        }
    }

    @Test func theCallOfRecordDecisionsBeforeSessionLivenessStillRecords() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential()
            let session = try await fixture.session()
            let record = try await fixture.releaseRecord(credential, session: session, maxFailures: 3)
            let recorded = try await fixture.pool.withConnection { connection in
                // The call as DecisionWriter made it before migrations/0019.
                try connection.query(
                    "SELECT batch_index, recorded, failures FROM record_decisions($1::decision_batch_row[], $2::uuid[], $3::uuid[], $4::boolean, $5::int[])",
                    [DecisionWriter.rows([record], type: try DecisionWriter.batchRowType(connection)), .textArray([record.sessionID.text]), .textArray([record.tenantID.text]), .bool(false), .null]
                ).rows.first?.decode("recorded", as: Bool.self)
            }
            #expect(recorded == true)
            #expect(try await fixture.decisions.get(tenantID: fixture.tenantID, id: record.id) != nil)
        }
    }
}
