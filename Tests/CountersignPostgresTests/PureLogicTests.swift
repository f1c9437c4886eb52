import CountersignCore
import Foundation
import Testing

@testable import CountersignPostgres

/// The parts that need no database: bookkeeping, text formats, checksums, redaction.
@Suite("Pool state machine")
struct PoolStateMachineTests {
    typealias Machine = PoolStateMachine<String, String>

    @Test("leases up to capacity, then queues; releases hand over first come, first served")
    func leasesAndWaiters() {
        var machine = Machine(capacity: 2)
        guard case .leased(nil) = machine.tryAcquire() else {
            Issue.record("first lease")
            return
        }
        guard case .leased(nil) = machine.acquire(id: 1, waiter: "w1") else {
            Issue.record("second lease")
            return
        }
        guard case .mustWait = machine.acquire(id: 2, waiter: "w2") else {
            Issue.record("third must wait")
            return
        }
        guard case .mustWait = machine.acquire(id: 3, waiter: "w3") else {
            Issue.record("fourth must wait")
            return
        }
        #expect(machine.leased == 2)
        #expect(machine.waiterCount == 2)

        guard case .handOver(to: "w2", connection: "c1") = machine.release("c1", openedDelta: 1) else {
            Issue.record("w2 first")
            return
        }
        guard case .handOver(to: "w3", connection: nil) = machine.release(nil, openedDelta: 0) else {
            Issue.record("then w3")
            return
        }
        #expect(machine.waiterCount == 0)
        guard case .none = machine.release("c2", openedDelta: 1) else {
            Issue.record("idle")
            return
        }
        #expect(machine.idle == ["c2"])
        #expect(machine.open == 2)
        guard case .leased("c2") = machine.tryAcquire() else {
            Issue.record("reuse idle")
            return
        }
    }

    @Test("a newcomer never overtakes a queue")
    func noOvertaking() {
        var machine = Machine(capacity: 1)
        _ = machine.tryAcquire()
        _ = machine.acquire(id: 1, waiter: "w1")
        guard case .mustWait = machine.tryAcquire() else {
            Issue.record("must wait behind w1")
            return
        }
    }

    @Test("removing waiters, and closing while leases are out")
    func removeAndClose() {
        var machine = Machine(capacity: 1)
        _ = machine.tryAcquire()
        _ = machine.acquire(id: 7, waiter: "w7")
        _ = machine.acquire(id: 8, waiter: "w8")
        #expect(machine.removeWaiter(id: 7) == "w7")
        #expect(machine.removeWaiter(id: 7) == nil)
        #expect(machine.updateWaiter(id: 8) { $0 += "!" })

        let closing = machine.beginClosing()
        #expect(closing?.failedWaiters == ["w8!"])
        #expect(closing?.drained == false)
        #expect(machine.beginClosing() == nil)
        guard case .closed = machine.tryAcquire() else {
            Issue.record("closed")
            return
        }
        guard case .drained = machine.release("c", openedDelta: 1) else {
            Issue.record("drained")
            return
        }
        #expect(machine.takeIdleConnections() == ["c"])
        #expect(machine.open == 0)
    }

    /// A call a close gave up on comes back after it: its connection is not kept idle, where
    /// nothing would ever finish it.
    @Test("a lease released after the close keeps no connection")
    func releaseAfterClose() {
        var machine = Machine(capacity: 2)
        guard case .leased(nil) = machine.tryAcquire() else {
            Issue.record("lease")
            return
        }
        #expect(machine.beginClosing()?.drained == false)
        machine.markClosed()
        guard case .none = machine.release("late", openedDelta: 1) else {
            Issue.record("none")
            return
        }
        #expect(machine.idle.isEmpty)
        #expect(machine.open == 0 && machine.leased == 0)
    }
}

@Suite("Statement cache")
struct StatementCacheTests {
    @Test("evicts the least recently used statement")
    func lru() {
        var cache = StatementCache(capacity: 2)
        let a = StatementCache.Key(sql: "a", parameterTypes: [0])
        let b = StatementCache.Key(sql: "b", parameterTypes: [0])
        let c = StatementCache.Key(sql: "c", parameterTypes: [0])
        let nameA = cache.makeName()
        #expect(cache.insert(a, name: nameA) == nil)
        #expect(cache.insert(b, name: cache.makeName()) == nil)
        #expect(cache.name(for: a) == nameA)
        let evicted = cache.insert(c, name: cache.makeName())
        #expect(evicted != nil && evicted != nameA)
        #expect(cache.name(for: b) == nil)
        #expect(cache.count == 2)
        #expect(cache.remove(a) == nameA)
    }

    @Test("the same SQL with other parameter types is another statement")
    func typesAreKey() {
        var cache = StatementCache(capacity: 4)
        _ = cache.insert(.init(sql: "x", parameterTypes: [20]), name: "n1")
        #expect(cache.name(for: .init(sql: "x", parameterTypes: [0])) == nil)
    }
}

@Suite("Array literals")
struct ArrayLiteralTests {
    @Test("every element is quoted and escaped")
    func encode() {
        #expect(PostgresArrayLiteral.encode([]) == "{}")
        #expect(PostgresArrayLiteral.encode(["a", "NULL", "x\"y", "b\\c", ""]) == #"{"a","NULL","x\"y","b\\c",""}"#)
    }

    @Test("PostgreSQL's output decodes, NULL included")
    func decode() {
        #expect(PostgresArrayLiteral.decode("{}")! == [])
        #expect(PostgresArrayLiteral.decode(#"{a,"b c",NULL,"NULL","x\"y\\z",""}"#)! == ["a", "b c", nil, "NULL", "x\"y\\z", ""])
        #expect(PostgresArrayLiteral.decode("[2:3]={x,y}")! == ["x", "y"])
        #expect(PostgresArrayLiteral.decode("{{1,2},{3,4}}") == nil)
        #expect(PostgresArrayLiteral.decode("{\"open}") == nil)
        #expect(PostgresArrayLiteral.decode("not an array") == nil)
    }

    @Test("encode then decode is the identity", arguments: [["a,b", "}{", "\\\\", "\"\"", " x ", "null", "ü"]])
    func roundTrip(_ elements: [String]) {
        #expect(PostgresArrayLiteral.decode(PostgresArrayLiteral.encode(elements))! == elements)
    }
}

@Suite("Timestamps")
struct TimestampTests {
    @Test("formatting is ISO 8601 in UTC with microseconds")
    func format() {
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000000Z")
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: 1_709_211_845.5)) == "2024-02-29T13:04:05.500000Z")
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: -0.000_001)) == "1969-12-31T23:59:59.999999Z")
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: -62_167_219_200)) == "0001-01-01T00:00:00.000000Z BC")
    }

    @Test("PostgreSQL's output forms parse")
    func parse() {
        let leap = Date(timeIntervalSince1970: 1_709_211_845.5)
        #expect(PostgresTimestamp.parse("2024-02-29 13:04:05.5+00") == leap)
        #expect(PostgresTimestamp.parse("2024-02-29T13:04:05.500000Z") == leap)
        #expect(PostgresTimestamp.parse("2024-02-29 18:34:05.5+05:30") == leap)
        #expect(PostgresTimestamp.parse("2024-02-29 13:04:05.5") == leap)
        #expect(PostgresTimestamp.parse("2024-02-29 12:04:05.5-01:00:00") == leap)
        #expect(PostgresTimestamp.parse("2024-02-29") == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(PostgresTimestamp.parse("0001-01-01 00:00:00+00 BC") == Date(timeIntervalSince1970: -62_167_219_200))
        #expect(PostgresTimestamp.parse("0002-01-01 00:00:00+00 BC") == Date(timeIntervalSince1970: -62_198_755_200))
        #expect(PostgresTimestamp.parse("infinity") == nil)
        #expect(PostgresTimestamp.parse("2024-13-01") == nil)
        #expect(PostgresTimestamp.parse("2024-02-29 13:04") == nil)
    }

    @Test("civil dates round trip over a wide range")
    func civil() {
        for days in stride(from: Int64(-800_000), through: 3_000_000, by: 997) {
            let (year, month, day) = CivilDate.date(daysSince1970: days)
            #expect(CivilDate.daysSince1970(year: year, month: month, day: day) == days)
        }
    }
}

@Suite("Configuration")
struct ConfigurationTests {
    @Test("defaults")
    func defaults() {
        let configuration = PostgresConfiguration()
        #expect(configuration.connectionString == "")
        #expect(configuration.poolSize == 6)
        #expect(configuration.acquireTimeout == .seconds(5))
        #expect(configuration.connectTimeout == .seconds(5))
        #expect(configuration.statementTimeout == .seconds(5))
        #expect(configuration.applicationName == "countersign")
    }

    @Test("our defaults come before the connection string, UTF-8 after it")
    func parameterOrder() {
        let configuration = PostgresConfiguration(connectionString: "host=db", connectTimeout: .milliseconds(2500))
        let parameters = configuration.connectionParameters(environment: [:])
        #expect(parameters.map(\.keyword) == ["connect_timeout", "fallback_application_name", "dbname", "client_encoding"])
        #expect(parameters[0].value == "3")
        #expect(parameters[2].value == "host=db")
        let withEnvironment = configuration.connectionParameters(environment: ["PGCONNECT_TIMEOUT": "9"])
        #expect(!withEnvironment.map(\.keyword).contains("connect_timeout"))
    }

    @Test("statement timeout in whole milliseconds")
    func milliseconds() {
        #expect(PostgresConfiguration.wholeMilliseconds(.seconds(5)) == 5000)
        #expect(PostgresConfiguration.wholeMilliseconds(.microseconds(1500)) == 2)
        #expect(PostgresConfiguration.wholeMilliseconds(.zero) == 0)
        #expect(PostgresConfiguration.wholeMilliseconds(.seconds(-1)) == 0)
        #expect(PostgresConfiguration.wholeMilliseconds(.seconds(1_000_000_000)) == Int64(Int32.max))
    }

    @Test(
        "redaction masks passwords",
        arguments: [
            ("host=db password=hunter2 user=app", "host=db password=*** user=app"),
            ("host=db password = 'hun ter\\' 2' user=app", "host=db password = *** user=app"),
            ("host=db sslpassword=x", "host=db sslpassword=***"),
            ("postgresql://app:hunter2@db1:5432,db2/countersign?sslmode=require", "postgresql://app:***@db1:5432,db2/countersign?sslmode=require"),
            ("postgres://app@db/x?password=hunter2&sslmode=require", "postgres://app@db/x?password=***&sslmode=require"),
            ("postgresql://a%40b:p%40ss@db", "postgresql://a%40b:***@db"),
            ("postgresql://db/countersign", "postgresql://db/countersign"),
            ("countersign", "countersign"),
            ("", ""),
            ("host=db password='unterminated", "host=db password=***"),
        ]
    )
    func redaction(_ input: String, _ expected: String) {
        let redacted = PostgresConfiguration.redacted(input)
        #expect(redacted == expected)
        #expect(!redacted.contains("hunter2"))
    }

    @Test("libpq's messages about a mistyped URI never carry its password, whole or in pieces")
    func scrubbing() {
        let cases = [
            ("postgresql://alice:Sup3rS3cret@[::1", #"invalid IPv6 host address in URI: "postgresql://alice:Sup3rS3cret@[::1""#, "Sup3rS3cret"),
            ("postgresql://alice:p%zzSecretPW@127.0.0.1:1/db", #"invalid percent-encoded token: "p%zzSecretPW""#, "SecretPW"),
            ("postgresql://alice:p@ssWORD@127.0.0.1:1/db", #"could not translate host name "ssWORD@127.0.0.1" to address"#, "ssWORD"),
            ("postgresql://alice:pa/ssword@db/x", #"could not translate host name "pa" to address"#, "ssword"),
        ]
        for (url, message, secret) in cases {
            let scrubbed = PostgresConfiguration.scrubbed(message, about: url)
            #expect(!scrubbed.contains(secret), "\(scrubbed)")
        }
        #expect(PostgresConfiguration.redacted("postgresql://alice:pa/ssword@db/x") == "postgresql://alice:***@db/x")
        let refused = #"connection to server at "127.0.0.1", port 1 failed: Connection refused"#
        #expect(PostgresConfiguration.scrubbed(refused, about: "postgresql://alice:hunter2@127.0.0.1:1/db") == refused)
        #expect(PostgresConfiguration.scrubbed(refused, about: "postgresql://alice:p@127.0.0.1:1/db") == refused)
    }

    @Test("a connection string's database can be replaced, in either form")
    func replaceDatabase() throws {
        let keyValue = try PostgresConfiguration.connectionString("host=/tmp/x user=u dbname=old", replacingDatabaseWith: "new")
        #expect(keyValue.contains("dbname='new'"))
        #expect(!keyValue.contains("old"))
        #expect(keyValue.contains("host='/tmp/x'"))
        let uri = try PostgresConfiguration.connectionString("postgresql://u:p%20w@h:5433/old?sslmode=disable", replacingDatabaseWith: "new")
        #expect(uri.contains("dbname='new'") && uri.contains("port='5433'") && uri.contains("password='p w'"))
        #expect(throws: PostgresError.self) {
            _ = try PostgresConfiguration.connectionString("host=x bogus_option=1", replacingDatabaseWith: "n")
        }
        #expect(PostgresConfiguration.connectionString(["host": "/a b", "dbname": "it's"]) == #"host='/a b' dbname='it\'s'"#)
    }
}

@Suite("Errors and checksums")
struct ErrorAndChecksumTests {
    @Test("description carries only code and SQLSTATE")
    func description() {
        var error = PostgresError(.queryFailed, sqlState: "23505", constraintName: "users_email_key")
        #expect(error.description == "PostgresError(code: query_failed, sqlState: 23505)")
        #expect(error.isUniqueViolation)
        error = PostgresError(.poolTimeout)
        #expect("\(error)" == "PostgresError(code: pool_timeout)")
        #expect(PostgresError.Code.connectionLost.rawValue == "connection_lost")
        #expect(PostgresError(.queryFailed, sqlState: "57014").isQueryCanceled)
        #expect(PostgresError(.queryFailed, sqlState: "40001").isSerializationFailure)
        #expect(PostgresError(.queryFailed, sqlState: "23503").isForeignKeyViolation)
    }

    @Test("SHA-256 test vectors")
    func sha256() {
        #expect(SHA256.hexDigest(Array("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hexDigest(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hexDigest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        )
        #expect(
            SHA256.hexDigest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    @Test("migration file names")
    func fileNames() throws {
        #expect(Migration.parse(fileName: "0001_init.sql")! == (1, "init"))
        #expect(Migration.parse(fileName: "12_add-index_2.sql")! == (12, "add-index_2"))
        #expect(Migration.parse(fileName: "0001_.sql") == nil)
        #expect(Migration.parse(fileName: "0000_zero.sql") == nil)
        #expect(Migration.parse(fileName: "init.sql") == nil)
        #expect(Migration.parse(fileName: "0001_init.sql.bak") == nil)
        #expect(Migration.parse(fileName: "0001_in it.sql") == nil)
        #expect(try Migration(fileName: "0042_x.sql", sql: "").version == 42)
    }

    @Test("planning refuses a changed, unknown or out-of-order history")
    func plan() throws {
        let one = Migration(version: 1, name: "a", sql: "SELECT 1")
        let two = Migration(version: 2, name: "b", sql: "SELECT 2")
        let three = Migration(version: 3, name: "c", sql: "SELECT 3")
        func applied(_ migration: Migration, checksum: String? = nil) -> MigrationRunner.AppliedMigration {
            .init(version: migration.version, name: migration.name, checksum: checksum ?? migration.checksum)
        }
        #expect(try MigrationRunner.plan(migrations: [one, two, three], applied: [applied(one)]) == [two, three])
        #expect(try MigrationRunner.plan(migrations: [one, two], applied: [applied(one), applied(two)]) == [])
        #expect(throws: CountersignError(.migrationChecksumMismatch, "")) {
            try MigrationRunner.plan(migrations: [one, two], applied: [applied(one, checksum: "x")])
        }
        // A newer release's migration is served as it is; a removed file is refused.
        #expect(try MigrationRunner.plan(migrations: [one], applied: [applied(one), applied(two)]) == [])
        #expect(throws: CountersignError(.migrationUnknownVersion, "")) {
            try MigrationRunner.plan(migrations: [one, three], applied: [applied(one), applied(two)])
        }
        #expect(throws: CountersignError(.migrationOutOfOrder, "")) {
            try MigrationRunner.plan(migrations: [one, two, three], applied: [applied(one), applied(three)])
        }
        #expect(throws: CountersignError(.migrationDuplicateVersion, "")) {
            try MigrationRunner.plan(migrations: [one, Migration(version: 1, name: "z", sql: "")], applied: [])
        }
    }
}
