@testable import CountersignService
import CountersignPostgres
import CountersignStorage
import Foundation
import Logging
import Testing

@Suite("Retention sweep")
struct RetentionSweepTests {
    /// "retention sweep failed" alone left an operator to guess which table was piling up.
    @Test func aFailingStepIsNamedInTheWarning() async throws {
        try await ServiceWithDatabase.run { _, pool in
            // The first step still works; the second cannot find its table.
            _ = try await pool.withConnection { try $0.execute("ALTER TABLE sessions RENAME TO sessions_elsewhere") }
            let box = LogLines()
            var logger = Logger(label: "countersign.test.sweep", factory: { _ in RecordingLogHandler(into: box) })
            logger.logLevel = .info
            let sweep = PeriodicSweep.retention(
                decisions: DecisionStore(pool: pool),
                sessions: SessionStore(pool: pool),
                keptFor: .seconds(86_400),
                every: .milliseconds(20),
                logger: logger
            )
            let running = Task { try await sweep.run() }
            defer { running.cancel() }
            let deadline = ContinuousClock.now + .seconds(10)
            while box.all.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            running.cancel()
            _ = try? await running.value
            let warning = try #require(box.all.first)
            #expect(warning.hasPrefix("warning retention sweep failed"), "\(warning)")
            #expect(warning.contains("deleting ended sessions:"), "\(warning)")
            #expect(!warning.contains("deleting old decisions"), "\(warning)")
        }
    }
}
