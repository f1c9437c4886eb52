import CountersignPostgres
import Testing

/// Parameters are data, never SQL.
@Suite("Parameter safety")
struct ParameterSafetyTests {
    @Test("an injection attempt is stored as data and changes nothing else")
    func injectionStaysData() async throws {
        try await Fixtures.withFreshPool { pool, _ in
            let attacks = [
                "x'); DROP TABLE users; --",
                "' OR '1'='1",
                "\\'; DELETE FROM users; --",
                "$1; SELECT pg_sleep(10)",
                "'; COMMIT; DROP TABLE users; --",
            ]
            let stored = try await pool.withConnection { connection in
                try connection.simpleQuery("CREATE TABLE users (id serial PRIMARY KEY, name text NOT NULL)")
                for attack in attacks {
                    try connection.execute("INSERT INTO users (name) VALUES ($1)", [.text(attack)])
                }
                return try connection.query("SELECT name FROM users ORDER BY id").map { try $0.decode("name", as: String.self) }
            }
            #expect(stored == attacks)

            let matches = try await pool.withConnection { connection in
                try connection.query("SELECT count(*) AS n FROM users WHERE name = $1", ["' OR '1'='1' --"]).first!
                    .decode("n", as: Int.self)
            }
            #expect(matches == 0)

            let arrayAttack = try await pool.withConnection { connection in
                try connection.query(
                    "SELECT count(*) AS n FROM users WHERE name = ANY($1::text[])",
                    [.textArray(["\"}, {\"' OR 1=1 --", "x'); DROP TABLE users; --"])]
                ).first!.decode("n", as: Int.self)
            }
            #expect(arrayAttack == 1)
        }
    }

    @Test("query() runs exactly one statement")
    func oneStatementOnly() async throws {
        try await Fixtures.withFreshPool { pool, _ in
            try await pool.withConnection { try $0.simpleQuery("CREATE TABLE t (n int)") }
            let withoutParameters = await Fixtures.expectPostgresError(.queryFailed) {
                _ = try await pool.withConnection { try $0.query("SELECT 1; DROP TABLE t") }
            }
            #expect(withoutParameters?.sqlState == "42601")
            let withParameters = await Fixtures.expectPostgresError(.queryFailed) {
                _ = try await pool.withConnection { try $0.query("SELECT $1::int; DROP TABLE t", [1]) }
            }
            #expect(withParameters?.sqlState == "42601")
            let stillThere = try await pool.withConnection { connection in
                try connection.query("SELECT to_regclass('t') IS NOT NULL AS present").first!.decode("present", as: Bool.self)
            }
            #expect(stillThere)
        }
    }

    @Test("text with a NUL character is refused, not truncated")
    func nulCharacter() async throws {
        try await Fixtures.withFreshPool(poolSize: 1) { pool, _ in
            let error = await Fixtures.expectPostgresError(.invalidParameter) {
                _ = try await pool.withConnection { try $0.query("SELECT $1::text", [.text("abc\u{0}DROP")]) }
            }
            #expect(String(reflecting: error!).contains("$1"))
            await Fixtures.expectPostgresError(.invalidParameter) {
                _ = try await pool.withConnection { try $0.query("SELECT $1::text[]", [.textArray(["ok", "a\u{0}b"])]) }
            }
            await Fixtures.expectPostgresError(.invalidParameter) {
                _ = try await pool.withConnection { try $0.query("SELECT 1 -- \u{0}") }
            }
            // The connection is fine afterwards.
            let one = try await pool.withConnection { try $0.query("SELECT 1 AS v").first!.decode("v", as: Int.self) }
            #expect(one == 1)
        }
    }

    @Test("server errors stay out of description")
    func errorDescriptionIsGeneric() async throws {
        try await Fixtures.withFreshPool(poolSize: 1) { pool, _ in
            let error = await Fixtures.expectPostgresError(.queryFailed) {
                try await pool.withConnection { connection in
                    try connection.simpleQuery("CREATE TABLE secrets (value text PRIMARY KEY)")
                    try connection.execute("INSERT INTO secrets VALUES ($1)", ["hunter2-secret"])
                    try connection.execute("INSERT INTO secrets VALUES ($1)", ["hunter2-secret"])
                }
            }
            let error2 = try #require(error)
            #expect(error2.isUniqueViolation)
            #expect(error2.constraintName == "secrets_pkey")
            #expect(String(describing: error2) == "PostgresError(code: query_failed, sqlState: 23505)")
            #expect("\(error2)".contains("hunter2") == false)
            // Only the debug form carries the server's message (which echoes the key).
            #expect(String(reflecting: error2).contains("duplicate key"))
        }
    }
}
