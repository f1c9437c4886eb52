import CountersignPostgres
@testable import CountersignService
import CountersignTestSupport
import Testing

@Suite("Clean-up in a cancelled request")
struct UncancelledCleanupTests {
    /// A request cancelled between recording an answer and sending it (its service group stopping)
    /// must still undo the answer: the pool turns the cancelled task away, `uncancelled` does not.
    @Test func cleanUpReachesTheDatabaseFromACancelledTask() async throws {
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: try await TestDatabase.freshDatabase(), poolSize: 1))
        let request = Task {
            while !Task.isCancelled { await Task.yield() }
            var refusedDirectly = false
            do { _ = try await pool.withConnection { _ in 1 } } catch is CancellationError { refusedDirectly = true }
            let cleanedUp = try await uncancelled { try await pool.withConnection { try $0.query("SELECT 2::int8 AS n").rows[0].decode("n", as: Int.self) } }
            return (refusedDirectly, cleanedUp)
        }
        request.cancel()
        let (refusedDirectly, cleanedUp) = try await request.value
        #expect(refusedDirectly)
        #expect(cleanedUp == 2)
        await pool.close()
    }
}
