@testable import CountersignService
import CountersignPostgres
import CountersignStorage
import CountersignTestSupport
import Foundation
import Logging
import Testing

@Suite("Periodic sweeps")
struct RetentionSweepTests {
    /// Instances that never live an hour (frequent deploys, autoscaled pods) must still sweep.
    @Test func theFirstSweepMayComeBeforeTheInterval() async throws {
        let runs = CachedStatesTests.Loads()
        let sweep = PeriodicSweep(name: "test sweep", interval: .seconds(3600), firstAfter: .milliseconds(10), logger: Logger(label: "test")) {
            _ = runs.add()
        }
        let running = Task { try await sweep.run() }
        let deadline = ContinuousClock.now + .seconds(10)
        while runs.value == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(100))
        running.cancel()
        _ = try? await running.value
        // Once: the next waits the interval.
        #expect(runs.value == 1)
    }

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
