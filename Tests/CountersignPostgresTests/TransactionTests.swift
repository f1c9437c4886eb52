import CountersignPostgres
import Foundation
import Testing

/// withTransaction: all or nothing.
@Suite("Transactions")
struct TransactionTests {
    struct Boom: Error {}

    private func count(_ pool: PostgresPool) async throws -> Int {
        try await pool.withConnection { try $0.query("SELECT count(*) AS n FROM items").first!.decode("n", as: Int.self) }
    }

    private func withItemsTable(_ body: (PostgresPool) async throws -> Void) async throws {
        try await Fixtures.withFreshPool(poolSize: 2) { pool, _ in
            try await pool.withConnection { try $0.simpleQuery("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)") }
            try await body(pool)
        }
    }

    @Test("a throwing body rolls everything back and its error is rethrown")
    func rollbackOnThrow() async throws {
        try await withItemsTable { pool in
            await #expect(throws: Boom.self) {
                try await pool.withTransaction { connection in
                    try connection.execute("INSERT INTO items VALUES ($1, $2)", [1, "one"])
                    try connection.execute("INSERT INTO items VALUES ($1, $2)", [2, "two"])
                    throw Boom()
                }
            }
            let remaining = try await count(pool)
            #expect(remaining == 0)
        }
    }

    @Test("a body that returns commits")
    func commit() async throws {
        try await withItemsTable { pool in
            let inserted = try await pool.withTransaction { connection in
                try connection.execute("INSERT INTO items VALUES ($1, $2), ($3, $4)", [1, "one", 2, "two"])
            }
            #expect(inserted == 2)
            #expect(try await count(pool) == 2)
        }
    }

    @Test("a failed statement caught inside the body still rolls back")
    func swallowedFailure() async throws {
        try await withItemsTable { pool in
            await Fixtures.expectPostgresError(.transactionRolledBack) {
                try await pool.withTransaction { connection in
                    try connection.execute("INSERT INTO items VALUES ($1, $2)", [1, "one"])
                    do {
                        try connection.execute("INSERT INTO items VALUES ($1, $2)", [1, "duplicate"])
                    } catch let error as PostgresError where error.isUniqueViolation {
                        // Swallowed on purpose: the transaction is aborted anyway.
                    }
                }
            }
            #expect(try await count(pool) == 0)
            // The connection is clean for the next user.
            let inserted = try await pool.withTransaction { try $0.execute("INSERT INTO items VALUES (3, 'three')") }
            #expect(inserted == 1)
        }
    }

    @Test("constraint violations carry SQLSTATE and constraint name")
    func constraintErrors() async throws {
        try await withItemsTable { pool in
            try await pool.withConnection { connection in
                try connection.simpleQuery(
                    """
                    CREATE TABLE tags (item int NOT NULL REFERENCES items (id), label text CHECK (label <> ''));
                    INSERT INTO items VALUES (1, 'one');
                    """
                )
            }
            let unique = await Fixtures.expectPostgresError(.queryFailed) {
                _ = try await pool.withTransaction { try $0.execute("INSERT INTO items VALUES (1, 'again')") }
            }
            #expect(unique?.isUniqueViolation == true)
            #expect(unique?.constraintName == "items_pkey")

            let foreign = await Fixtures.expectPostgresError(.queryFailed) {
                _ = try await pool.withTransaction { try $0.execute("INSERT INTO tags VALUES (99, 'x')") }
            }
            #expect(foreign?.isForeignKeyViolation == true)
            #expect(foreign?.constraintName == "tags_item_fkey")

            let check = await Fixtures.expectPostgresError(.queryFailed) {
                _ = try await pool.withTransaction { try $0.execute("INSERT INTO tags VALUES (1, '')") }
            }
            #expect(check?.isCheckViolation == true)

            let notNull = await Fixtures.expectPostgresError(.queryFailed) {
                _ = try await pool.withTransaction { try $0.execute("INSERT INTO items VALUES (2, $1)", [nil]) }
            }
            #expect(notNull?.isNotNullViolation == true)
        }
    }

    @Test("a serialization failure surfaces at the conflicting statement or COMMIT")
    func serializationFailure() async throws {
        try await withItemsTable { pool in
            _ = try await pool.withConnection { try $0.execute("INSERT INTO items VALUES (1, 'one')") }
            // Two serializable transactions that each read what the other writes.
            let gate = AsyncGate()
            async let first: Void = pool.withTransaction { connection in
                try connection.simpleQuery("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                _ = try connection.query("SELECT count(*) FROM items")
                gate.arriveAndWait()
                try connection.execute("INSERT INTO items VALUES (10, 'a')")
            }
            async let second: Void = pool.withTransaction { connection in
                try connection.simpleQuery("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                _ = try connection.query("SELECT count(*) FROM items")
                gate.arriveAndWait()
                try connection.execute("INSERT INTO items VALUES (20, 'b')")
            }
            var failures: [PostgresError] = []
            do { try await first } catch let error as PostgresError { failures.append(error) }
            do { try await second } catch let error as PostgresError { failures.append(error) }
            #expect(failures.count == 1)
            #expect(failures.first?.isSerializationFailure == true)
        }
    }

    @Test("the connection cannot be used after its closure")
    func escapedConnection() async throws {
        try await Fixtures.withFreshPool(poolSize: 1) { pool, _ in
            nonisolated(unsafe) var escaped: PostgresConnection?
            try await pool.withConnection { connection in escaped = connection }
            #expect(throws: PostgresError.self) { _ = try escaped?.query("SELECT 1") }
            do {
                _ = try escaped?.query("SELECT 1")
            } catch let error as PostgresError {
                #expect(error.code == .connectionUnavailable)
            }
        }
    }
}

/// Blocks two pool threads until both have arrived (the pool runs each closure on its own thread).
final class AsyncGate: Sendable {
    private let condition = ConditionBox()

    func arriveAndWait() {
        condition.arriveAndWait(parties: 2)
    }
}

private final class ConditionBox: @unchecked Sendable {
    // @unchecked Sendable: `arrived` is only touched while holding `condition`'s lock.
    private let condition = NSCondition()
    private var arrived = 0

    func arriveAndWait(parties: Int) {
        condition.lock()
        arrived += 1
        condition.broadcast()
        let deadline = Date().addingTimeInterval(5)
        while arrived < parties, condition.wait(until: deadline) {}
        condition.unlock()
    }
}
