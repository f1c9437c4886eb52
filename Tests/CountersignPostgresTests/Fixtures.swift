import CountersignPostgres
import CountersignTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// Pools on fresh databases, and helpers shared by the tests.
enum Fixtures {
    static var logger: Logger {
        var logger = Logger(label: "countersign.postgres.tests")
        logger.logLevel = .warning
        return logger
    }

    /// A pool configuration with room to wait: the whole suite runs at once on two cores, so a
    /// caller may wait its turn for a connection far longer than a service would allow.
    static func configuration(
        _ connectionString: String,
        poolSize: Int = 3,
        acquireTimeout: Duration = .seconds(60),
        statementTimeout: Duration = .seconds(10),
        applicationName: String = "countersign-tests"
    ) -> PostgresConfiguration {
        PostgresConfiguration(
            connectionString: connectionString,
            poolSize: poolSize,
            acquireTimeout: acquireTimeout,
            connectTimeout: .seconds(5),
            statementTimeout: statementTimeout,
            applicationName: applicationName
        )
    }

    /// Runs `body` with a pool on a new, empty database, and closes the pool afterwards.
    static func withFreshPool<T>(
        poolSize: Int = 3,
        acquireTimeout: Duration = .seconds(60),
        statementTimeout: Duration = .seconds(10),
        applicationName: String = "countersign-tests",
        _ body: (PostgresPool, String) async throws -> T
    ) async throws -> T {
        let connectionString = try await TestDatabase.freshDatabase()
        let pool = PostgresPool(
            configuration: configuration(
                connectionString,
                poolSize: poolSize,
                acquireTimeout: acquireTimeout,
                statementTimeout: statementTimeout,
                applicationName: applicationName
            ),
            logger: logger
        )
        do {
            let result = try await body(pool, connectionString)
            await pool.close()
            return result
        } catch {
            await pool.close()
            throw error
        }
    }

    /// Runs `body` and returns the PostgresError it threw (recording an issue if it threw
    /// something else or nothing).
    @discardableResult
    static func expectPostgresError(
        _ code: PostgresError.Code,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async -> PostgresError? {
        do {
            try await body()
            Issue.record("expected PostgresError \(code), but nothing was thrown", sourceLocation: sourceLocation)
            return nil
        } catch let error as PostgresError {
            #expect(error.code == code, "\(String(reflecting: error))", sourceLocation: sourceLocation)
            return error
        } catch {
            Issue.record("expected PostgresError \(code), got \(String(reflecting: error))", sourceLocation: sourceLocation)
            return nil
        }
    }

    static func uniqueName(_ prefix: String) -> String {
        prefix + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }
}

/// A value shared between tasks and pool threads in tests.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { body(&$0) }
    }
}
