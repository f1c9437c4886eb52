@testable import CountersignPostgres
import CountersignTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// `PostgresListener`: notifications reach the handler, a lost connection is opened again (and
/// says so), and the service stops when the group shuts down.
@Suite("Listening for notifications")
struct ListenerTests {
    final class Heard: Sendable {
        private let events = Mutex<[PostgresListener.Event]>([])

        func append(_ event: PostgresListener.Event) { events.withLock { $0.append(event) } }

        /// Waits at most five seconds until `predicate` holds for what was heard.
        func wait(until predicate: ([PostgresListener.Event]) -> Bool) async throws -> [PostgresListener.Event] {
            for _ in 0..<500 {
                let heard = events.withLock { $0 }
                if predicate(heard) { return heard }
                try await Task.sleep(for: .milliseconds(10))
            }
            return events.withLock { $0 }
        }
    }

    /// A service run without timeouts (0) still bounds the listener's waits: its probe must find
    /// a connection the network dropped silently, or a shutdown would wait on it for ever.
    @Test func theListeningConnectionAlwaysHasTimeouts() {
        let unbounded = PostgresConfiguration(connectionString: "host=db", connectTimeout: .zero, statementTimeout: .zero)
        #expect(unbounded.responseTimeout == nil)
        #expect(PostgresListener.ownConnection(unbounded).responseTimeout == .seconds(10))
        let configured = PostgresConfiguration(connectionString: "host=db", connectTimeout: .seconds(2), statementTimeout: .seconds(3))
        #expect(PostgresListener.ownConnection(configured).responseTimeout == .seconds(5))
    }

    @Test func hearsNotificationsAndListensAgainAfterLosingItsConnection() async throws {
        let connectionString = try await TestDatabase.freshDatabase()
        let heard = Heard()
        let listener = PostgresListener(
            configuration: Fixtures.configuration(connectionString, poolSize: 1),
            channel: "countersign_test",
            logger: Fixtures.logger
        ) { heard.append($0) }
        let pool = PostgresPool(configuration: Fixtures.configuration(connectionString, poolSize: 1), logger: Fixtures.logger)
        let group = ServiceGroup(services: [listener], logger: Fixtures.logger)
        let running = Task { try await group.run() }

        #expect(try await heard.wait { $0 == [.listening] } == [.listening])
        try await pool.withTransaction { connection in
            _ = try connection.query("SELECT pg_notify('countersign_test', 'first')")
            _ = try connection.query("SELECT pg_notify('another_channel', 'not for it')")
        }
        // A rolled-back transaction announces nothing.
        await #expect(throws: (any Error).self) {
            try await pool.withTransaction { connection in
                _ = try connection.query("SELECT pg_notify('countersign_test', 'rolled back')")
                _ = try connection.query("SELECT 1 / 0")
            }
        }
        #expect(try await heard.wait { $0.count == 2 } == [.listening, .notification(payload: "first")])

        // Each loss is followed by the shortest pause again (0.5 s), not one that grew with the
        // losses before it (0.5 s, 1 s, 2 s, 5 s): the fourth would take at least 5 s. The bound
        // leaves a loaded machine 3.5 s for the reconnection itself.
        for round in 1...4 {
            let ended = try await pool.withConnection { connection in
                try connection.query(
                    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = 'countersign listener' AND datname = current_database()"
                ).first!.decode("n", as: Int.self)
            }
            #expect(ended == 1)
            let start = ContinuousClock.now
            #expect(try await heard.wait { $0.count == 2 + round }.last == .listening)
            #expect(ContinuousClock.now - start < .seconds(4), "round \(round)")
        }
        try await pool.withConnection { connection in
            _ = try connection.query("SELECT pg_notify('countersign_test', 'second')")
        }
        #expect(try await heard.wait { $0.count == 7 }.last == .notification(payload: "second"))

        await group.triggerGracefulShutdown()
        try await running.value
        await pool.close()
    }
}
