import CountersignCore
import CountersignPostgres
@testable import CountersignStorage
import Foundation
import Testing

/// Instances of the previous release keep writing decisions while a rolling upgrade replaces
/// them: the entry points they call survive the migrations.
@Suite("Decision batches across releases")
struct DecisionBatchCompatibilityTests {
    @Test(arguments: [
        // The call as DecisionWriter made it before migrations/0009.
        "SELECT batch_index, recorded, failures FROM record_decisions($1::decision_batch_row[], $2::uuid[], $3::uuid[], $4::boolean)",
        // ... and before migrations/0019, which added `session_live`.
        "SELECT batch_index, recorded, failures FROM record_decisions($1::decision_batch_row[], $2::uuid[], $3::uuid[], $4::boolean, $5::int[])",
    ])
    func aPreviousReleasesCallOfRecordDecisionsStillRecords(call: String) async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential()
            let session = try await fixture.session()
            let record = try await fixture.releaseRecord(credential, session: session, maxFailures: 3)
            let recorded = try await fixture.pool.withConnection { connection in
                var parameters: [PostgresValue] = [
                    DecisionWriter.rows([record], type: try DecisionWriter.batchRowType(connection)), .textArray([record.sessionID.text]),
                    .textArray([record.tenantID.text]), .bool(false),
                ]
                if call.contains("$5") { parameters.append(.null) }
                return try connection.query(call, parameters).rows.first?.decode("recorded", as: Bool.self)
            }
            #expect(recorded == true)
            #expect(try await fixture.decisions.get(tenantID: fixture.tenantID, id: record.id) != nil)
        }
    }
}
