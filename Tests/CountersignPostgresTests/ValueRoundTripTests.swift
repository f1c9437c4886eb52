import CountersignPostgres
import CountersignTestSupport
import Foundation
import Testing

/// Every PostgresValue kind goes to the server and comes back unchanged.
@Suite("Parameter round trips")
struct ValueRoundTripTests {
    /// One pool on one database for all round trips: they only run SELECTs.
    static let sharedPool = Task<PostgresPool, any Error> {
        PostgresPool(
            configuration: Fixtures.configuration(try await TestDatabase.freshDatabase(), poolSize: 2),
            logger: Fixtures.logger
        )
    }

    func select<T: PostgresDecodable>(_ sql: String, _ parameters: [PostgresValue], as type: T.Type = T.self) async throws -> T {
        try await Self.sharedPool.value.withConnection { connection in
            try connection.query(sql, parameters).first!.decode("v", as: T.self)
        }
    }

    static let texts = [
        "", "plain", "ünïcødé ✓ 🔐 漢字", "quote ' double \" backslash \\ end", "NULL", "null",
        "line\nbreak\ttab\r", "$1 $2 ?",
    ]

    @Test("text", arguments: texts)
    func text(_ value: String) async throws {
        #expect(try await select("SELECT $1::text AS v", [.text(value)], as: String.self) == value)
        // Untyped: the server infers text.
        #expect(try await select("SELECT $1 AS v", [PostgresValue(value)], as: String.self) == value)
        #expect(try await select("SELECT length($1::text) AS v", [.text(value)], as: Int.self) == value.count)
    }

    @Test("int", arguments: [Int64.min, -1, 0, 1, 42, Int64(Int32.max) + 1, Int64.max])
    func int(_ value: Int64) async throws {
        #expect(try await select("SELECT $1::int8 AS v", [.int(value)], as: Int64.self) == value)
        #expect(try await select("SELECT $1 AS v", [.int(value)], as: Int.self) == Int(value))
        // Typed int8, so arithmetic needs no cast.
        if value < Int64.max {
            #expect(try await select("SELECT $1 + 1 AS v", [.int(value)], as: Int64.self) == value + 1)
        }
    }

    @Test("small integers decode")
    func smallIntegers() async throws {
        #expect(try await select("SELECT $1::int4 AS v", [.int(Int(Int32.min))], as: Int32.self) == Int32.min)
        #expect(try await select("SELECT $1::int2 AS v", [.int(-7)], as: Int16.self) == -7)
        #expect(try await select("SELECT $1::int4 AS v", [PostgresValue(Int32(9))], as: Int32.self) == 9)
    }

    @Test("bool", arguments: [true, false])
    func bool(_ value: Bool) async throws {
        #expect(try await select("SELECT $1 AS v", [.bool(value)], as: Bool.self) == value)
        #expect(try await select("SELECT NOT $1 AS v", [.bool(value)], as: Bool.self) == !value)
    }

    @Test(
        "double",
        arguments: [
            0.0, -0.0, 1.5, -2.25e-300, .pi, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .infinity, -.infinity, 0.1,
        ]
    )
    func double(_ value: Double) async throws {
        let decoded = try await select("SELECT $1 AS v", [.double(value)], as: Double.self)
        #expect(decoded == value)
        #expect(decoded.sign == value.sign)
    }

    @Test("double NaN")
    func doubleNaN() async throws {
        #expect(try await select("SELECT $1 AS v", [.double(.nan)], as: Double.self).isNaN)
        #expect(try await select("SELECT $1 = 'NaN'::float8 AS v", [.double(.nan)], as: Bool.self))
    }

    static let byteStrings: [[UInt8]] = [
        [], [0], [0, 0, 0], [0, 1, 2, 0, 255], Array(0...255),
    ]

    @Test("bytea, zero bytes included", arguments: byteStrings)
    func bytea(_ value: [UInt8]) async throws {
        #expect(try await select("SELECT $1 AS v", [.bytea(value)], as: [UInt8].self) == value)
        #expect(try await select("SELECT length($1) AS v", [.bytea(value)], as: Int.self) == value.count)
    }

    @Test("large text and bytea")
    func largeValues() async throws {
        let text = String(repeating: "long ünï ", count: 20_000)
        #expect(try await select("SELECT $1::text AS v", [.text(text)], as: String.self) == text)
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try await select("SELECT $1 AS v", [.bytea(bytes)], as: [UInt8].self) == bytes)
    }

    @Test("uuid")
    func uuid() async throws {
        let value = UUID()
        #expect(try await select("SELECT $1::uuid AS v", [.uuid(value)], as: UUID.self) == value)
        #expect(try await select("SELECT $1::uuid::text AS v", [.uuid(value)], as: String.self) == value.uuidString.lowercased())
        #expect(try await select("SELECT gen_random_uuid() <> $1::uuid AS v", [.uuid(value)], as: Bool.self))
    }

    static let dates: [Date] = [
        Date(timeIntervalSince1970: 0),
        Date(timeIntervalSince1970: 1.5),
        Date(timeIntervalSince1970: -0.000_001),
        Date(timeIntervalSince1970: 1_709_211_845.123_456),
        Date(timeIntervalSince1970: -2_208_988_800),  // 1900-01-01
        Date(timeIntervalSince1970: 253_402_300_799.999_999),  // 9999-12-31T23:59:59.999999
        Date(timeIntervalSince1970: -62_135_596_800),  // 0001-01-01
        Date(timeIntervalSince1970: -62_167_219_200),  // 0000-01-01, i.e. 1 BC
        Date(timeIntervalSince1970: -62_198_755_200.25),  // 2 BC
    ]

    @Test("timestamp", arguments: dates)
    func timestamp(_ value: Date) async throws {
        // Microseconds, or the Double's own precision far from 1970.
        let tolerance = max(0.000_001, value.timeIntervalSince1970.ulp * 4)
        let decoded = try await select("SELECT $1::timestamptz AS v", [.timestamp(value)], as: Date.self)
        #expect(abs(decoded.timeIntervalSince(value)) <= tolerance)
        let epoch = try await select("SELECT extract(epoch FROM $1::timestamptz)::float8 AS v", [.timestamp(value)], as: Double.self)
        #expect(abs(epoch - value.timeIntervalSince1970) <= tolerance * 2)
        // timestamp without time zone is read as UTC.
        let plain = try await select("SELECT $1::timestamp AS v", [.timestamp(value)], as: Date.self)
        #expect(abs(plain.timeIntervalSince(value)) <= tolerance)
    }

    @Test("timestamp now and in offsets other than UTC")
    func timestampOffsets() async throws {
        let now = Date()
        let decoded = try await select("SELECT $1::timestamptz AS v", [.timestamp(now)], as: Date.self)
        #expect(abs(decoded.timeIntervalSince(now)) < 0.000_001)
        // Output in other zones (as a text column) parses too.
        let zoned = try await select("SELECT text '2024-03-01 12:00:00.5+05:30' AS v", [], as: Date.self)
        #expect(zoned == Date(timeIntervalSince1970: 1_709_274_600.5))
        let date = try await select("SELECT '2024-02-29'::date AS v", [], as: Date.self)
        #expect(date == Date(timeIntervalSince1970: 1_709_164_800))
    }

    static let arrays: [[String]] = [
        [], [""], ["a"], ["a", "b"],
        ["a,b", "c\"d", "e\\f", "NULL", "null", " spaced ", "{braces}", "ünï 🔐", "'quote'", "", "\\\"", "tab\there"],
    ]

    @Test("text array with quotes, commas, backslashes and NULL-ish strings", arguments: arrays)
    func textArray(_ value: [String]) async throws {
        #expect(try await select("SELECT $1::text[] AS v", [.textArray(value)], as: [String].self) == value)
        #expect(
            try await select("SELECT coalesce(array_length($1::text[], 1), 0) AS v", [.textArray(value)], as: Int.self)
                == value.count
        )
        // No element became SQL NULL.
        #expect(try await select("SELECT array_position($1::text[], NULL) IS NULL AS v", [.textArray(value)], as: Bool.self))
    }

    @Test("arrays decode with NULL elements and other element types")
    func arrayDecoding() async throws {
        #expect(try await select("SELECT ARRAY['a', NULL, 'NULL'] AS v", [], as: [String?].self) == ["a", nil, "NULL"])
        #expect(try await select("SELECT ARRAY[1, 2, 3] AS v", [], as: [Int].self) == [1, 2, 3])
        #expect(try await select("SELECT '{}'::int[] AS v", [], as: [Int].self) == [])
        #expect(try await select("SELECT '[0:1]={x,y}'::text[] AS v", [], as: [String].self) == ["x", "y"])
        let id = UUID()
        #expect(try await select("SELECT ARRAY[$1::uuid] AS v", [.uuid(id)], as: [UUID].self) == [id])
        await Fixtures.expectPostgresError(.decodingFailed) {
            _ = try await select("SELECT ARRAY['a', NULL] AS v", [], as: [String].self)
        }
    }

    @Test("json")
    func json() async throws {
        let value = #"{"a": [1, "x\"y"], "b": null, "ü": true}"#
        #expect(try await select("SELECT $1::json::text AS v", [.json(value)], as: String.self) == value)
        #expect(try await select("SELECT $1::jsonb -> 'a' ->> 1 AS v", [.json(value)], as: String.self) == "x\"y")
    }

    @Test("NULL for every kind of column")
    func null() async throws {
        for type in ["text", "int8", "bool", "float8", "bytea", "uuid", "timestamptz", "text[]", "jsonb"] {
            #expect(try await select("SELECT $1::\(type) IS NULL AS v", [.null], as: Bool.self), "\(type)")
        }
        #expect(try await select("SELECT $1::text AS v", [nil], as: String?.self) == nil)
        #expect(try await select("SELECT $1::int8 AS v", [PostgresValue(Int?.none)], as: Int?.self) == nil)
        #expect(try await select("SELECT $1::int8 AS v", [PostgresValue(Int?.some(3))], as: Int?.self) == 3)
        #expect(try await select("SELECT NULL::bytea AS v", [], as: [UInt8]?.self) == nil)
    }

    @Test("literals and optional initializers")
    func literals() {
        let text: PostgresValue = "x"
        let int: PostgresValue = 5
        let bool: PostgresValue = true
        let null: PostgresValue = nil
        #expect(text == .text("x"))
        #expect(int == .int(5))
        #expect(bool == .bool(true))
        #expect(null == .null)
        #expect(PostgresValue(String?.none) == .null)
        #expect(PostgresValue(UUID?.none) == .null)
        #expect(PostgresValue(Date?.none) == .null)
        #expect(PostgresValue([String]?.some(["a"])) == .textArray(["a"]))
        #expect(PostgresValue.int(7) == .int(Int64(7)))
    }

    @Test("NULL into a non-optional names the column, never the value")
    func nullIntoNonOptional() async throws {
        let error = await Fixtures.expectPostgresError(.decodingFailed) {
            _ = try await select("SELECT NULL::text AS v", [], as: String.self)
        }
        #expect(error?.column == "v")
        #expect(String(reflecting: error).contains("\"v\""))

        let wrongType = await Fixtures.expectPostgresError(.decodingFailed) {
            _ = try await select("SELECT 'secret-value-123' AS v", [], as: Int.self)
        }
        #expect(wrongType?.column == "v")
        #expect(!String(describing: wrongType!).contains("secret"))
        #expect(!String(reflecting: wrongType!).contains("secret"))

        let missing = await Fixtures.expectPostgresError(.decodingFailed) {
            _ = try await Self.sharedPool.value.withConnection { connection in
                try connection.query("SELECT 1 AS v").first!.decode("nope", as: Int.self)
            }
        }
        #expect(missing?.column == "nope")
    }

    @Test("rows decode by index, and results expose columns")
    func resultShape() async throws {
        let result = try await Self.sharedPool.value.withConnection { connection in
            try connection.query("SELECT n, n * 2 AS double FROM generate_series(1, 3) AS n")
        }
        #expect(result.count == 3)
        #expect(result.columns == ["n", "double"])
        #expect(try result.first?.decode(1, as: Int.self) == 2)
        #expect(try result.map { try $0.decode("double", as: Int.self) } == [2, 4, 6])
        #expect(result.affectedRows == 3)
    }

    @Test("arrays of records, in binary: every field comes back as it went, whatever it holds")
    func recordArrays() async throws {
        struct Row: Equatable, Sendable {
            var text: String?, int4: Int?, int8: Int64?, flag: Bool?, id: UUID?, at: Date?, json: String?
        }
        let hostile = Self.texts + ["(", ")", ",", "{", "}", "\"\"", "\\\"", " leading", "trailing ", "a,b", "(x,y)"]
        var rows: [Row] = []
        for (index, text) in hostile.enumerated() {
            rows.append(Row(text: text, int4: index - 3, int8: Int64(index) << 40, flag: index % 2 == 0, id: UUID(),
                            at: Date(timeIntervalSince1970: 1_700_000_000.123456 + Double(index)), json: #"{"a": [1, "b"], "t": "\#(index)"}"#))
            rows.append(Row(text: nil, int4: nil, int8: nil, flag: nil, id: nil, at: nil, json: nil))
        }
        rows.append(Row(text: "", int4: Int(Int32.min), int8: Int64.min, flag: false, id: UUID(), at: Date(timeIntervalSince1970: 0), json: "[]"))
        rows.append(Row(text: "end", int4: Int(Int32.max), int8: Int64.max, flag: true, id: UUID(), at: Date(timeIntervalSince1970: -1_000_000_000.5), json: "null"))
        let sent = rows
        let back = try await Self.sharedPool.value.withTransaction { connection in
            try connection.execute("CREATE TYPE pg_temp.round_trip AS (t text, i int4, l int8, b boolean, u uuid, a timestamptz, j jsonb)")
            let type = try connection.query("SELECT 'pg_temp.round_trip'::regtype::oid::int8 AS oid").first!.decode("oid", as: Int64.self)
            var array = PostgresRecordArray(elementType: UInt32(type))
            for row in sent {
                array.startRecord()
                array.add(text: row.text)
                array.add(int4: row.int4)
                array.add(int8: row.int8)
                array.add(bool: row.flag)
                array.add(uuid: row.id)
                array.add(timestamptz: row.at)
                array.add(jsonb: row.json)
            }
            #expect(try connection.query("SELECT cardinality($1::pg_temp.round_trip[]) AS n", [PostgresRecordArray(elementType: UInt32(type)).value]).first?.decode("n", as: Int.self) == 0)
            let back = try connection.query(
                "SELECT r.t, r.i, r.l, r.b, r.u, r.a, r.j::text AS j FROM unnest($1::pg_temp.round_trip[]) WITH ORDINALITY AS r(t, i, l, b, u, a, j, position) ORDER BY position",
                [array.value]
            ).map { row in
                Row(text: try row.decode("t"), int4: try row.decode("i"), int8: try row.decode("l"), flag: try row.decode("b"),
                    id: try row.decode("u"), at: try row.decode("a"), json: try row.decode("j"))
            }
            // A field of the wrong type is refused, not misread.
            var wrong = PostgresRecordArray(elementType: UInt32(type))
            wrong.startRecord()
            wrong.add(int8: 1)
            try connection.execute("SAVEPOINT wrong_type")
            #expect(throws: PostgresError.self) {
                try connection.query("SELECT (unnest($1::pg_temp.round_trip[])).t", [wrong.value])
            }
            try connection.execute("ROLLBACK TO SAVEPOINT wrong_type")
            return back
        }
        #expect(back.count == rows.count)
        for (sent, received) in zip(rows, back) {
            #expect(sent.text == received.text && sent.int4 == received.int4 && sent.int8 == received.int8 && sent.flag == received.flag && sent.id == received.id, "\(sent) came back as \(received)")
            #expect(sent.at.map { ($0.timeIntervalSince1970 * 1e6).rounded() } == received.at.map { ($0.timeIntervalSince1970 * 1e6).rounded() }, "\(sent.at as Any) came back as \(received.at as Any)")
            #expect(sent.json.map(Self.jsonValue) == received.json.map(Self.jsonValue), "\(sent.json as Any) came back as \(received.json as Any)")
        }
    }

    private static func jsonValue(_ text: String) -> NSObject? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed) as? NSObject
    }
}
