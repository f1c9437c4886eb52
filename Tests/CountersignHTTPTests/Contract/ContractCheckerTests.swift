import Foundation
import Testing

// Tests of the contract checker itself, on small inline specs. If these pass, a violation reported
// against openapi.yaml is the spec's or the server's fault, not the checker's.

/// A 3.1 document around `components.schemas.S` (one line of YAML flow style) and optional extra schemas.
private func contract(schema: String, extra: [String: String] = [:]) throws -> OpenAPIContract {
    let others = extra.sorted { $0.key < $1.key }.map { "    \($0.key): \($0.value)" }.joined(separator: "\n")
    return try OpenAPIContract.load(yaml: """
    openapi: 3.1.0
    info: {title: test, version: "1"}
    paths: {}
    components:
      schemas:
        S: \(schema)
    \(others)
    """)
}

private func errors(_ schema: String, _ json: String, extra: [String: String] = [:]) throws -> [String] {
    try contract(schema: schema, extra: extra).validate(json: Data(json.utf8), againstSchemaNamed: "S")
}

struct ContractSchemaCase: Sendable, CustomTestStringConvertible {
    let schema: String
    let json: String
    /// Nil: the value must validate. Otherwise a fragment of the expected violation.
    let error: String?
    var testDescription: String { "\(schema) ∋ \(json)" }
}

private func ok(_ schema: String, _ json: String) -> ContractSchemaCase { ContractSchemaCase(schema: schema, json: json, error: nil) }
private func bad(_ schema: String, _ json: String, _ error: String) -> ContractSchemaCase { ContractSchemaCase(schema: schema, json: json, error: error) }

@Suite struct ContractSchemaValidatorTests {
    static let cases: [ContractSchemaCase] = [
        // type
        ok("{type: string}", #""x""#),
        bad("{type: string}", "1", "$: expected string, got integer 1"),
        ok("{type: integer}", "1.0"),
        bad("{type: integer}", "1.5", "expected integer, got number 1.5"),
        bad("{type: integer}", "true", "expected integer, got boolean"),
        ok("{type: number}", "1"),
        ok("{type: [string, \"null\"]}", "null"),
        bad("{type: [string, \"null\"]}", "1", "expected string or null"),
        bad("{type: boolean}", "0", "expected boolean"),
        bad("{type: object}", "[]", "expected object, got array"),
        bad("{type: array}", "{}", "expected array, got object"),
        bad("{type: \"null\"}", "false", "expected null"),
        // OpenAPI 3.0 nullable, tolerated
        ok("{type: string, nullable: true}", "null"),
        ok("{type: string, enum: [a], nullable: true}", "null"),
        bad("{type: string, nullable: false}", "null", "expected string"),
        // properties, required, additionalProperties
        bad("{type: object, properties: {a: {type: string}}, required: [a]}", "{}", #"$: missing required property "a""#),
        bad("{type: object, properties: {a: {type: string}}}", #"{"a": 1}"#, "$.a: expected string"),
        ok("{type: object, properties: {a: {type: string}}}", #"{"a": "x", "b": 1}"#),
        bad("{properties: {a: {}}, additionalProperties: false}", #"{"a": 1, "b": 1}"#, "$.b: unexpected property (additionalProperties is false)"),
        ok("{additionalProperties: {type: integer}}", #"{"b": 2}"#),
        bad("{additionalProperties: {type: integer}}", #"{"b": "x"}"#, "$.b: expected integer"),
        bad("{properties: {content-type: {type: string}}}", #"{"content-type": 1}"#, #"$["content-type"]: expected string"#),
        bad("{properties: {x: false}}", #"{"x": 1}"#, "$.x: no value is allowed here"),
        ok("{patternProperties: {\"^x-\": {type: string}}, additionalProperties: false}", #"{"x-a": "1"}"#),
        bad("{patternProperties: {\"^x-\": {type: string}}, additionalProperties: false}", #"{"y": "1"}"#, "$.y: unexpected property"),
        bad("{minProperties: 1}", "{}", "fewer than minProperties 1"),
        bad("{maxProperties: 1}", #"{"a": 1, "b": 2}"#, "more than maxProperties 1"),
        bad("{dependentRequired: {a: [b]}}", #"{"a": 1}"#, #"property "a" requires property "b""#),
        bad("{propertyNames: {pattern: \"^[a-z]+$\"}}", #"{"A": 1}"#, "$.A: property name is invalid"),
        // items
        bad("{type: array, items: {type: integer}}", #"[1, "x"]"#, "$[1]: expected integer"),
        bad("{type: array, prefixItems: [{type: string}], items: {type: integer}}", #"["a", "b"]"#, "$[1]: expected integer"),
        ok("{type: array, prefixItems: [{type: string}], items: {type: integer}}", #"["a", 2]"#),
        bad("{minItems: 1}", "[]", "0 items, fewer than minItems 1"),
        bad("{maxItems: 2}", "[1, 2, 3]", "3 items, more than maxItems 2"),
        bad("{uniqueItems: true}", "[1, 2, 1.0]", "items 0 and 2 are equal"),
        ok("{uniqueItems: true}", #"[1, "1", [1]]"#),
        bad("{contains: {type: string}}", "[1, 2]", "0 items match \"contains\""),
        // enum and const
        bad("{enum: [none, forSession, permanent, synchronizable]}", #""forever""#, #"$: "forever" is not one of none, forSession, permanent, synchronizable"#),
        ok("{enum: [1, 2]}", "1.0"),
        ok("{enum: [{a: [1]}]}", #"{"a": [1]}"#),
        bad("{enum: [on, off]}", "true", "is not one of on, off"),
        bad("{const: v1}", #""v2""#, #""v2" is not the constant "v1""#),
        ok("{const: null}", "null"),
        // combinators
        ok("{oneOf: [{type: string}, {type: integer}]}", "1"),
        bad("{oneOf: [{type: string}, {type: integer}]}", "true", "matches none of the 2 oneOf alternatives"),
        bad("{oneOf: [{type: number}, {type: integer}]}", "1", "matches 2 oneOf alternatives (alternative 0, alternative 1)"),
        ok("{anyOf: [{type: string}, {type: integer}]}", "1"),
        bad("{anyOf: [{type: string}, {type: integer}]}", "[]", "matches none of the 2 anyOf alternatives"),
        bad("{allOf: [{required: [a]}, {required: [b]}]}", #"{"a": 1}"#, #"missing required property "b""#),
        bad("{not: {type: string}}", #""x""#, "must not match the \"not\" schema"),
        ok("{if: {required: [a]}, then: {required: [b]}, else: {required: [c]}}", #"{"a": 1, "b": 2}"#),
        bad("{if: {required: [a]}, then: {required: [b]}, else: {required: [c]}}", #"{"a": 1}"#, #"missing required property "b""#),
        bad("{if: {required: [a]}, then: {required: [b]}, else: {required: [c]}}", "{}", #"missing required property "c""#),
        // unevaluatedProperties sees through allOf/$ref: how 3.1 closes a composed object
        ok("{allOf: [{properties: {a: {}}}], properties: {b: {}}, unevaluatedProperties: false}", #"{"a": 1, "b": 2}"#),
        bad("{allOf: [{properties: {a: {}}}], properties: {b: {}}, unevaluatedProperties: false}", #"{"a": 1, "c": 3}"#, "$.c: unexpected property (unevaluatedProperties is false)"),
        bad("{oneOf: [{properties: {a: {type: integer}}, required: [a]}, {properties: {b: {}}, required: [b]}], unevaluatedProperties: false}", #"{"a": 1, "b": 2}"#, "$.b: unexpected property"),
        bad("{unevaluatedProperties: {type: string}}", #"{"a": 1}"#, "$.a: expected string"),
        // strings
        bad("{minLength: 2}", #""a""#, "length 1 is shorter than minLength 2"),
        bad("{maxLength: 3}", #""abcd""#, "length 4 is longer than maxLength 3"),
        ok("{maxLength: 2}", #""👍é""#),
        ok("{pattern: \"^[a-z]+$\"}", #""abc""#),
        bad("{pattern: \"^[a-z]+$\"}", #""aB""#, #""aB" does not match pattern ^[a-z]+$"#),
        ok("{pattern: b}", #""abc""#),
        ok("{type: integer, pattern: \"^x$\"}", "1"),
        // numbers
        bad("{minimum: 1}", "0", "0 is less than minimum 1"),
        bad("{maximum: 10}", "11", "11 is greater than maximum 10"),
        ok("{minimum: 1, maximum: 10}", "10"),
        bad("{exclusiveMinimum: 0}", "0", "is not greater than exclusiveMinimum 0"),
        ok("{exclusiveMinimum: 0}", "0.1"),
        bad("{exclusiveMaximum: 1}", "1", "is not less than exclusiveMaximum 1"),
        bad("{minimum: 0, exclusiveMinimum: true}", "0", "is not greater than 0"),
        bad("{maximum: 9223372036854775806}", "9223372036854775807", "greater than maximum"),
        bad("{multipleOf: 0.5}", "1.25", "not a multiple of 0.5"),
        ok("{multipleOf: 0.1}", "0.3"),
        // formats
        ok("{format: uuid}", #""3f2b8c9e-1d4a-4b6f-9c2e-7a1b0c3d4e5f""#),
        bad("{format: uuid}", #""3f2b""#, #""3f2b" is not a valid uuid"#),
        ok("{format: date-time}", #""2024-02-29T12:00:00Z""#),
        ok("{format: date-time}", #""2024-01-01T00:00:00.123456+05:30""#),
        ok("{format: date-time}", #""2016-12-31T23:59:60z""#),
        bad("{format: date-time}", #""2023-02-29T12:00:00Z""#, "is not a valid date-time"),
        bad("{format: date-time}", #""2024-01-01 00:00:00Z""#, "is not a valid date-time"),
        bad("{format: date-time}", #""2024-01-01T24:00:00Z""#, "is not a valid date-time"),
        bad("{format: date-time}", #""2024-01-01T00:00:00""#, "is not a valid date-time"),
        ok("{format: date}", #""2024-12-31""#),
        bad("{format: date}", #""2024-13-01""#, "is not a valid date"),
        ok("{format: byte}", #""aGVsbG8=""#),
        ok("{format: byte}", #""""#),
        bad("{format: byte}", #""aGVsbG8""#, "is not a valid byte (padded base64)"),
        bad("{format: byte}", #""ab-_""#, "is not a valid byte"),
        ok("{format: uri}", #""https://example.com/a?b=1#c""#),
        ok("{format: uri}", #""urn:uuid:3f2b8c9e-1d4a-4b6f-9c2e-7a1b0c3d4e5f""#),
        bad("{format: uri}", #""/relative/path""#, "is not a valid uri"),
        bad("{format: uri}", #""https://exa mple.com""#, "is not a valid uri"),
        ok("{format: email}", #""a@b.example""#),
        bad("{format: email}", #""a.example""#, "is not a valid email"),
        ok("{format: ipv4}", #""192.0.2.1""#),
        bad("{format: ipv4}", #""192.0.2.256""#, "is not a valid ipv4"),
        ok("{type: integer, format: int32}", "2147483647"),
        bad("{type: integer, format: int32}", "2147483648", "is not a valid int32: outside the int32 range"),
        bad("{type: integer, format: int32}", "-2147483649", "outside the int32 range"),
        ok("{type: integer, format: int64}", "-9223372036854775808"),
        bad("{type: integer, format: int64}", "1e19", "outside the int64 range"),
        ok("{format: password}", #""anything""#),
        ok("{format: uuid}", "12"),
        ok("{format: int32}", #""not a number""#),
        // references
        ok("{$ref: \"#/components/schemas/T\"}", #""x""#),
        bad("{$ref: \"#/components/schemas/T\"}", "1", "$: expected string"),
        bad("{$ref: \"#/components/schemas/Nope\"}", "1", "$: unresolvable $ref #/components/schemas/Nope"),
        bad("{$ref: \"#/components/schemas/A\"}", "1", "circular $ref"),
        ok("{$ref: \"#/components/schemas/T\", maxLength: 3}", #""abc""#),
        bad("{$ref: \"#/components/schemas/T\", maxLength: 3}", #""abcd""#, "longer than maxLength 3"),
        bad("{$ref: \"#/components/schemas/Weird~1Name\"}", "1", "expected boolean"),
        bad("{properties: {x: {$ref: \"#/components/schemas/S/properties/y\"}, y: {type: string}}}", #"{"x": 1}"#, "$.x: expected string"),
        // boolean schemas
        ok("true", "1"),
        bad("false", "1", "$: no value is allowed here"),
    ]

    static let extra = [
        "T": "{type: string}",
        "A": "{$ref: \"#/components/schemas/B\"}",
        "B": "{$ref: \"#/components/schemas/A\"}",
        "\"Weird/Name\"": "{type: boolean}",
    ]

    @Test(arguments: cases)
    func keyword(_ c: ContractSchemaCase) throws {
        let found = try errors(c.schema, c.json, extra: Self.extra)
        if let expected = c.error {
            #expect(found.contains { $0.contains(expected) }, "expected \"\(expected)\", got \(found)")
        } else {
            #expect(found.isEmpty, "\(found)")
        }
    }

    @Test func violationsNameTheJSONPath() throws {
        let c = try contract(schema: "{$ref: \"#/components/schemas/Policy\"}", extra: [
            "Policy": "{type: object, required: [rules], properties: {rules: {type: array, items: {$ref: \"#/components/schemas/Rule\"}}}}",
            "Rule": "{type: object, required: [then], properties: {then: {$ref: \"#/components/schemas/Then\"}}}",
            "Then": "{type: object, additionalProperties: false, properties: {persistence: {type: string, enum: [none, forSession, permanent, synchronizable]}}}",
        ])
        let body = #"{"rules": [{"then": {}}, {"then": {}}, {"then": {"persistence": "forever", "x": 1}}]}"#
        let found = c.validate(json: Data(body.utf8), againstSchemaNamed: "S")
        #expect(found == [
            #"$.rules[2].then.persistence: "forever" is not one of none, forSession, permanent, synchronizable"#,
            "$.rules[2].then.x: unexpected property (additionalProperties is false)",
        ])
    }

    @Test func recursiveSchemasFollowTheData() throws {
        let found = try errors(
            "{$ref: \"#/components/schemas/Node\"}",
            #"{"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]}"#,
            extra: ["Node": "{type: object, required: [name], properties: {name: {type: string}, children: {type: array, items: {$ref: \"#/components/schemas/Node\"}}}}"]
        )
        #expect(found == ["$.children[0].children[0].name: expected string, got integer 3"])
    }

    @Test func oneOfExplainsTheAlternativeTheDiscriminatorPicks() throws {
        let found = try errors(
            "{oneOf: [{$ref: \"#/components/schemas/Allow\"}, {$ref: \"#/components/schemas/Deny\"}], discriminator: {propertyName: effect, mapping: {allow: \"#/components/schemas/Allow\"}}}",
            #"{"effect": "allow", "persistence": "forever"}"#,
            extra: [
                "Allow": "{type: object, required: [effect], properties: {effect: {const: allow}, persistence: {enum: [none, permanent]}}}",
                "Deny": "{type: object, required: [effect, reason], properties: {effect: {const: deny}, reason: {type: string}}}",
            ]
        )
        #expect(found == [
            "$: matches none of the 2 oneOf alternatives; closest is #/components/schemas/Allow:",
            #"  $.persistence: "forever" is not one of none, permanent"#,
        ])
    }

    @Test func oneOfWithoutDiscriminatorExplainsTheClosestAlternative() throws {
        let found = try errors(
            "{oneOf: [{type: string}, {type: object, required: [a, b, c]}, {type: object, required: [a], properties: {a: {type: integer}}}]}",
            #"{"a": "x"}"#
        )
        #expect(found.first == "$: matches none of the 3 oneOf alternatives; closest is alternative 2:")
        #expect(found.dropFirst().map { $0 } == ["  $.a: expected integer, got string \"x\""])
    }
}

@Suite struct ContractJSONParsingTests {
    @Test(arguments: [
        ("[1,]", "expected"), (#"{"a": 1,}"#, "member name"), (#"{"a": 1, "a": 2}"#, "duplicate member \"a\""),
        ("01", "leading zero"), ("1.", "digit after"), ("{\"a\":1}x", "trailing"), ("1e400", "out of range"),
        ("\"\u{01}\"", "control character"), (#""\ud800""#, "unpaired surrogate"), (#""\u12g4""#, "\\u escape"),
        ("NaN", "unexpected"), ("", "end of input"), ("\u{FEFF}1", "byte order mark"), ("'a'", "unexpected"),
        (String(repeating: "[", count: 600) + String(repeating: "]", count: 600), "nesting"),
    ])
    func rejectsWhatClientsWouldReject(_ text: String, _ reason: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
        do { _ = try JSONValue.parse(text) } catch { #expect(error.reason.contains(reason), "\(error)") }
    }

    @Test func parsesValues() throws {
        let value = try JSONValue.parse(#" {"i": -9223372036854775808, "d": 1.5e3, "big": 18446744073709551616, "s": "\u00e9\ud83d\udc4d\n\/", "a": [true, false, null], "o": {}} "#)
        #expect(value["i"] == .integer(.min))
        #expect(value["d"] == .number(1500))
        #expect(value["big"] == .number(18446744073709551616))
        #expect(value["s"] == .string("é👍\n/"))
        #expect(value["a"] == .array([.bool(true), .bool(false), .null]))
        #expect(value["o"] == .object([:]))
        #expect(try JSONValue.parse("2.0").isIntegral)
        #expect(try JSONValue.parse("2.0").typeName == "integer")
    }

    @Test func rendersStableCompactJSON() throws {
        let value = try JSONValue.parse(#"{"b": [1, 2.5, "x\"y"], "a": null}"#)
        #expect(value.description == #"{"a":null,"b":[1,2.5,"x\"y"]}"#)
        #expect(try JSONValue.parse(value.description) == value)
    }
}

@Suite struct ContractYAMLLoadingTests {
    @Test func usesYAML12TypesNotYAML11() throws {
        let c = try OpenAPIContract.load(yaml: """
        openapi: 3.1.0
        info: {title: t, version: 1.0}
        paths: {}
        x-values:
          words: [on, off, yes, no, y, n, On]
          bools: [true, false, True]
          date: 2024-01-01
          stamp: 2024-01-01T00:00:00Z
          quoted: "1"
          ints: [1, -2, +3, 0x1F, 0o17, 9223372036854775808]
          floats: [1.5, 1e3, .5]
          text: |
            line
          nulls: [~, null, Null]
          empty:
        """)
        let x = try #require(c.document["x-values"])
        #expect(x["words"] == .array(["on", "off", "yes", "no", "y", "n", "On"].map(JSONValue.string)))
        #expect(x["bools"] == .array([.bool(true), .bool(false), .bool(true)]))
        #expect(x["date"] == .string("2024-01-01"))
        #expect(x["stamp"] == .string("2024-01-01T00:00:00Z"))
        #expect(x["quoted"] == .string("1"))
        #expect(x["ints"] == .array([.integer(1), .integer(-2), .integer(3), .integer(31), .integer(15), .number(9223372036854775808)]))
        #expect(x["floats"] == .array([.number(1.5), .number(1000), .number(0.5)]))
        #expect(x["nulls"] == .array([.null, .null, .null]))
        #expect(x["empty"] == .null)
        #expect(x["text"] == .string("line\n"))
        #expect(c.document["info"]?["version"] == .number(1))
    }

    @Test func anchorsAndAliasesExpand() throws {
        let c = try OpenAPIContract.load(yaml: """
        openapi: 3.1.0
        info: {title: t, version: "1"}
        paths: {}
        x-a: &id {type: string, format: uuid}
        x-b: *id
        """)
        #expect(c.document["x-b"] == c.document["x-a"])
        #expect(c.document["x-b"]?["format"] == .string("uuid"))
    }

    @Test func rejectsDuplicateKeysAndNonSpecs() {
        #expect(throws: ContractError.self) { try OpenAPIContract.load(yaml: "openapi: 3.1.0\npaths: {}\nopenapi: 3.1.1\n") }
        #expect(throws: ContractError.self) { try OpenAPIContract.load(yaml: "just: yaml\n") }
        #expect(throws: ContractError.self) { try OpenAPIContract.load(yaml: "a: [\n") }
        #expect(throws: ContractError.self) { try OpenAPIContract.load(path: "/nonexistent/openapi.yaml") }
    }

    @Test func loadsJSONToo() throws {
        let c = try OpenAPIContract.load(yaml: #"{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/x": {"get": {"operationId": "x", "responses": {"204": {"description": "ok"}}}}}}"#)
        #expect(c.operations().map(\.operationId) == ["x"])
    }

    @Test func findsTheRepositoryRootFromASourceFile() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString)")
        let nested = root.appendingPathComponent("Tests/Some/Deep")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data().write(to: root.appendingPathComponent("Package.swift"))
        try Data("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\n".utf8).write(to: root.appendingPathComponent("openapi.yaml"))
        let file = nested.appendingPathComponent("XTests.swift").path

        #expect(OpenAPIContract.repositoryRoot(from: file) == root.standardizedFileURL.path)
        let path = try OpenAPIContract.specPath(from: file)
        #expect(try OpenAPIContract.load(path: path).operations().isEmpty)
        #expect(OpenAPIContract.repositoryRoot(from: "/definitely/not/here.swift") == nil)
    }
}

// MARK: - Requests and responses

private let serviceSpec = """
openapi: 3.1.0
info: {title: Countersign, version: "1"}
paths:
  /v1/sessions:
    post:
      operationId: createSession
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/NewSession"}
      responses:
        "201":
          description: created
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Session"}
        4XX: {$ref: "#/components/responses/Problem"}
  /v1/sessions/current:
    get:
      operationId: currentSession
      responses:
        "200":
          description: the caller's session
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Session"}
  /v1/sessions/{sessionId}:
    parameters:
      - {name: sessionId, in: path, required: true, schema: {type: string, format: uuid}}
    get:
      operationId: getSession
      parameters:
        - {name: verbose, in: query, schema: {type: boolean}}
        - {name: limit, in: query, required: true, schema: {type: integer, minimum: 1}}
      responses:
        "200":
          description: the session
          content:
            application/json; charset=utf-8:
              schema: {$ref: "#/components/schemas/Session"}
        "404":
          description: exactly this
          content:
            application/problem+json:
              schema: {type: object, required: [code], properties: {code: {const: notFound}}}
        4XX: {$ref: "#/components/responses/Problem"}
        default: {$ref: "#/components/responses/Problem"}
    delete:
      operationId: deleteSession
      responses:
        "204": {description: deleted}
  /v1/sessions/{sessionId}/challenges:
    get:
      operationId: listChallenges
      parameters:
        - {name: sessionId, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: challenges
          content:
            application/json:
              schema: {type: array, items: {type: object}}
  /files/{name}.json:
    get:
      operationId: getFile
      parameters:
        - {name: name, in: path, required: true, schema: {type: string}}
      responses:
        "200": {description: file, content: {"*/*": {}}}
  /metrics:
    get:
      operationId: metrics
      responses:
        "200":
          description: Prometheus text
          content:
            text/plain: {schema: {type: string}}
components:
  schemas:
    NewSession:
      type: object
      additionalProperties: false
      required: [tenant]
      properties:
        tenant: {type: string, minLength: 1}
    Session:
      type: object
      required: [id, expiresAt]
      properties:
        id: {type: string, format: uuid}
        expiresAt: {type: string, format: date-time}
  responses:
    Problem:
      description: an RFC 9457 problem
      content:
        application/problem+json:
          schema: {type: object, required: [title], properties: {title: {type: string}}}
"""

private let sessionID = "3f2b8c9e-1d4a-4b6f-9c2e-7a1b0c3d4e5f"
private let sessionJSON = Data(#"{"id": "3f2b8c9e-1d4a-4b6f-9c2e-7a1b0c3d4e5f", "expiresAt": "2030-01-01T00:00:00Z"}"#.utf8)

@Suite struct ContractPathMatchingTests {
    let c: OpenAPIContract
    init() throws { c = try OpenAPIContract.load(yaml: serviceSpec) }

    @Test func literalSegmentsBeatTemplates() {
        #expect(c.operation(method: "GET", path: "/v1/sessions/current")?.operationId == "currentSession")
        #expect(c.operation(method: "GET", path: "/v1/sessions/\(sessionID)")?.operationId == "getSession")
        #expect(c.operation(method: "GET", path: "/v1/sessions/\(sessionID)")?.pathParameters == ["sessionId": sessionID])
    }

    @Test func aLiteralWithoutTheMethodFallsBackToTheTemplate() {
        let op = c.operation(method: "delete", path: "/v1/sessions/current")
        #expect(op?.operationId == "deleteSession")
        #expect(op?.method == "DELETE")
        #expect(op?.pathParameters == ["sessionId": "current"])
    }

    @Test func queryFragmentAndOriginAreIgnoredAndValuesDecoded() {
        #expect(c.operation(method: "GET", path: "/v1/sessions/a%20b/challenges?x=1#top")?.pathParameters == ["sessionId": "a b"])
        #expect(c.operation(method: "GET", path: "http://localhost:8080/metrics?x")?.operationId == "metrics")
    }

    @Test func mixedSegments() {
        #expect(c.operation(method: "GET", path: "/files/report.v2.json")?.pathParameters == ["name": "report.v2"])
        #expect(c.operation(method: "GET", path: "/files/.json") == nil)
    }

    @Test(arguments: ["/v1/sessions/", "/v1/sessions//challenges", "/v1/sessions/x/challenges/", "/v1", "/v1/sessions/x/y", ""])
    func noLooseMatches(_ path: String) {
        #expect(c.operation(method: "GET", path: path) == nil)
    }

    @Test func listsEveryOperationSorted() {
        let all = c.operations()
        #expect(all.map { "\($0.method) \($0.path) \($0.operationId ?? "-")" } == [
            "GET /files/{name}.json getFile",
            "GET /metrics metrics",
            "POST /v1/sessions createSession",
            "GET /v1/sessions/current currentSession",
            "GET /v1/sessions/{sessionId} getSession",
            "DELETE /v1/sessions/{sessionId} deleteSession",
            "GET /v1/sessions/{sessionId}/challenges listChallenges",
        ])
    }

    @Test func matcherRanksSegmentsLeftToRight() {
        let m = PathMatcher(templates: ["/{a}/b", "/a/{b}", "/a/b", "/{a}/{b}", "/a/{b}.x"])
        #expect(m.matches("/a/b").map(\.template) == ["/a/b", "/a/{b}", "/{a}/b", "/{a}/{b}"])
        #expect(m.matches("/a/b.x").map(\.template) == ["/a/{b}.x", "/a/{b}", "/{a}/{b}"])
    }
}

@Suite struct ContractResponseValidationTests {
    let c: OpenAPIContract
    init() throws { c = try OpenAPIContract.load(yaml: serviceSpec) }

    @Test func conformingResponses() {
        #expect(c.validateResponse(method: "GET", path: "/v1/sessions/\(sessionID)", status: 200,
                                   contentType: "application/json; charset=utf-8", body: sessionJSON) == [])
        #expect(c.validateResponse(method: "GET", path: "/v1/sessions/current", status: 200, contentType: "Application/JSON", body: sessionJSON) == [])
        #expect(c.validateResponse(method: "DELETE", path: "/v1/sessions/\(sessionID)", status: 204, contentType: nil, body: Data()) == [])
        #expect(c.validateResponse(method: "GET", path: "/metrics", status: 200, contentType: "text/plain; version=0.0.4", body: Data("# HELP x\n".utf8)) == [])
        #expect(c.validateResponse(method: "GET", path: "/files/a.json", status: 200, contentType: "image/png", body: Data([0x89])) == [])
        // Under */* with no schema, a body that says it is JSON must still be JSON.
        #expect(c.validateResponse(method: "GET", path: "/files/a.json", status: 200, contentType: "application/json", body: Data("[]".utf8)) == [])
        #expect(c.validateResponse(method: "GET", path: "/files/a.json", status: 200, contentType: "application/json", body: Data("[".utf8)).count == 1)
        #expect(c.validateResponse(method: "HEAD", path: "/v1/sessions/\(sessionID)", status: 200, contentType: nil, body: Data()).first?.hasPrefix("no operation HEAD") == true)
    }

    @Test func unknownOperation() {
        #expect(c.validateResponse(method: "GET", path: "/v1/x", status: 200, contentType: nil, body: Data()) == ["no operation GET /v1/x in openapi.yaml"])
        #expect(c.validateResponse(method: "PUT", path: "/v1/sessions/current?x=1", status: 200, contentType: nil, body: Data())
            == ["no operation PUT /v1/sessions/current in openapi.yaml (/v1/sessions/current declares GET)"])
    }

    @Test func undeclaredStatus() {
        #expect(c.validateResponse(method: "GET", path: "/v1/sessions/current", status: 418, contentType: nil, body: Data())
            == ["GET /v1/sessions/current 418: status 418 is not declared for currentSession (declared: 200)"])
    }

    @Test func exactStatusThenRangeThenDefault() {
        let problem = Data(#"{"title": "Not Found"}"#.utf8)
        let path = "/v1/sessions/\(sessionID)"
        // 404 is declared exactly, with its own schema: the 4XX schema must not be used.
        #expect(c.validateResponse(method: "GET", path: path, status: 404, contentType: "application/problem+json", body: problem)
            == [#"GET \#(path) 404: $: missing required property "code""#])
        #expect(c.validateResponse(method: "GET", path: path, status: 409, contentType: "application/problem+json", body: problem) == [])
        #expect(c.validateResponse(method: "GET", path: path, status: 503, contentType: "application/problem+json", body: problem) == [])
        #expect(c.validateResponse(method: "POST", path: "/v1/sessions", status: 422, contentType: "application/problem+json", body: Data("{}".utf8))
            == [#"POST /v1/sessions 422: $: missing required property "title""#])
    }

    @Test func danglingResponseReference() throws {
        let c = try OpenAPIContract.load(yaml: """
        openapi: 3.1.0
        paths: {/a: {get: {responses: {'200': {$ref: "#/components/responses/Gone"}}}}}
        """)
        #expect(c.validateResponse(method: "GET", path: "/a", status: 200, contentType: nil, body: Data())
            == ["GET /a 200: response $ref #/components/responses/Gone does not resolve"])
    }

    @Test func bodyMustMatchTheSchema() {
        let body = Data(#"{"id": "nope", "expiresAt": "tomorrow", "extra": 1}"#.utf8)
        #expect(c.validateResponse(method: "GET", path: "/v1/sessions/current", status: 200, contentType: "application/json", body: body) == [
            #"GET /v1/sessions/current 200: $.expiresAt: "tomorrow" is not a valid date-time (RFC 3339)"#,
            #"GET /v1/sessions/current 200: $.id: "nope" is not a valid uuid"#,
        ])
    }

    @Test func bodyMustBeJSON() {
        let found = c.validateResponse(method: "GET", path: "/v1/sessions/current", status: 200, contentType: "application/json", body: Data("<html>".utf8))
        #expect(found.count == 1 && found[0].contains("body is not JSON") && found[0].contains("<html>"))
        let empty = c.validateResponse(method: "GET", path: "/v1/sessions/current", status: 200, contentType: "application/json", body: Data())
        #expect(empty.count == 1 && empty[0].contains("body is not JSON"))
    }

    @Test func contentTypeMustBeDeclared() {
        #expect(c.validateResponse(method: "GET", path: "/v1/sessions/current", status: 200, contentType: "text/html", body: sessionJSON)
            == ["GET /v1/sessions/current 200: content type text/html is not declared (declared: application/json)"])
        #expect(c.validateResponse(method: "GET", path: "/v1/sessions/current", status: 200, contentType: nil, body: sessionJSON)
            == ["GET /v1/sessions/current 200: no Content-Type (declared: application/json)"])
        #expect(c.validateResponse(method: "GET", path: "/metrics", status: 200, contentType: "application/json", body: Data("{}".utf8))
            == ["GET /metrics 200: content type application/json is not declared (declared: text/plain)"])
    }

    @Test func noContentMeansNoBody() {
        #expect(c.validateResponse(method: "DELETE", path: "/v1/sessions/\(sessionID)", status: 204, contentType: "application/json", body: Data("{}".utf8))
            == ["DELETE /v1/sessions/\(sessionID) 204: the response declares no content but the body has 2 bytes"])
    }
}

@Suite struct ContractRequestValidationTests {
    let c: OpenAPIContract
    init() throws { c = try OpenAPIContract.load(yaml: serviceSpec) }

    @Test func validAndInvalidBodies() {
        #expect(c.validateRequest(method: "POST", path: "/v1/sessions", body: Data(#"{"tenant": "acme"}"#.utf8)) == [])
        #expect(c.validateRequest(method: "POST", path: "/v1/sessions", body: Data(#"{"tenant": "", "x": 1}"#.utf8)) == [
            "POST /v1/sessions request: $.tenant: length 0 is shorter than minLength 1",
            "POST /v1/sessions request: $.x: unexpected property (additionalProperties is false)",
        ])
        #expect(c.validateRequest(method: "POST", path: "/v1/sessions", body: nil) == ["POST /v1/sessions request: requestBody is required but the body is empty"])
        #expect(c.validateRequest(method: "POST", path: "/v1/sessions", body: Data("{".utf8)).first?.contains("body is not JSON") == true)
        #expect(c.validateRequest(method: "DELETE", path: "/v1/sessions/\(sessionID)", body: Data("{}".utf8))
            == ["DELETE /v1/sessions/\(sessionID) request: has a body but the operation declares no requestBody"])
        #expect(c.validateRequest(method: "POST", path: "/v1/sessions", body: Data("a=b".utf8), contentType: "application/x-www-form-urlencoded")
            == ["POST /v1/sessions request: content type application/x-www-form-urlencoded is not declared (declared: application/json)"])
    }

    @Test func pathAndQueryParameters() {
        #expect(c.validateRequest(method: "GET", path: "/v1/sessions/\(sessionID)?limit=5&verbose=true", body: nil) == [])
        #expect(c.validateRequest(method: "GET", path: "/v1/sessions/not-a-uuid?limit=0&verbose=maybe", body: nil) == [
            #"GET /v1/sessions/not-a-uuid request: path parameter sessionId: "not-a-uuid" is not a valid uuid"#,
            #"GET /v1/sessions/not-a-uuid request: query parameter verbose: expected boolean, got string "maybe""#,
            "GET /v1/sessions/not-a-uuid request: query parameter limit: 0 is less than minimum 1",
        ])
        #expect(c.validateRequest(method: "GET", path: "/v1/sessions/\(sessionID)", body: nil)
            == ["GET /v1/sessions/\(sessionID) request: missing required query parameter limit"])
        #expect(c.validateRequest(method: "GET", path: "/nowhere", body: nil) == ["no operation GET /nowhere in openapi.yaml"])
    }
}

// MARK: - Lint

@Suite struct ContractLintTests {
    @Test func aSoundSpecLintsClean() throws {
        #expect(try OpenAPIContract.load(yaml: serviceSpec).lint() == [])
    }

    private func lint(_ yaml: String) throws -> [String] {
        try OpenAPIContract.load(yaml: "openapi: 3.1.0\ninfo: {title: t, version: \"1\"}\n" + yaml).lint()
    }

    private func expectProblem(_ yaml: String, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let found = try lint(yaml)
        #expect(found.contains { $0.contains(fragment) }, "expected \"\(fragment)\" in \(found)", sourceLocation: sourceLocation)
    }

    @Test func danglingAndExternalReferences() throws {
        try expectProblem("""
        paths: {}
        components: {schemas: {A: {properties: {b: {$ref: "#/components/schemas/Missing"}}}}}
        """, #"components.schemas.A.properties.b["$ref"]: $ref #/components/schemas/Missing does not resolve"#)
        try expectProblem("""
        paths: {}
        components: {schemas: {A: {$ref: "other.yaml#/X"}}}
        """, "points outside this document")
        try expectProblem("""
        paths: {}
        components: {schemas: {A: {$ref: "#/components/schemas/B"}, B: {$ref: "#/components/schemas/A"}}}
        """, "circular chain")
    }

    @Test func referencesInsideExamplesAreData() throws {
        #expect(try lint("""
        paths: {}
        components:
          schemas:
            A:
              type: object
              properties:
                example: {type: object}
                default: {type: object}
              example: {example: {$ref: nowhere}}
        """) == [])
        // ...but a schema property that happens to be *named* `example` is still walked.
        try expectProblem("""
        paths: {}
        components: {schemas: {A: {properties: {example: {$ref: "#/nowhere"}}}}}
        """, "$ref #/nowhere does not resolve")
    }

    @Test func operationIds() throws {
        try expectProblem("paths: {/a: {get: {responses: {'204': {description: x}}}}}", "GET /a: no operationId")
        try expectProblem("""
        paths:
          /a: {get: {operationId: same, responses: {'204': {description: x}}}}
          /b: {get: {operationId: same, responses: {'204': {description: x}}}}
        """, "GET /b: operationId same is also used by GET /a")
    }

    @Test func pathParameters() throws {
        try expectProblem("paths: {'/a/{id}': {get: {operationId: a, responses: {'204': {description: x}}}}}",
                          "GET /a/{id}: path parameter id is not declared in parameters")
        try expectProblem("""
        paths: {/a: {get: {operationId: a, parameters: [{name: id, in: path, required: true, schema: {type: string}}], responses: {'204': {description: x}}}}}
        """, "declares path parameter id, which is not in the path")
        try expectProblem("""
        paths: {'/a/{id}': {get: {operationId: a, parameters: [{name: id, in: path, schema: {type: string}}], responses: {'204': {description: x}}}}}
        """, "path parameter id must have required: true")
        // Declared once on the path item, or through a $ref to components: both count.
        #expect(try lint("""
        paths:
          /a/{id}/{rev}:
            parameters: [{$ref: "#/components/parameters/Id"}]
            get:
              operationId: a
              parameters: [{name: rev, in: path, required: true, schema: {type: integer}}]
              responses: {'204': {description: x}}
        components: {parameters: {Id: {name: id, in: path, required: true, schema: {type: string}}}}
        """) == [])
    }

    @Test func securityRequirementsNameDefinedSchemes() throws {
        try expectProblem("security: [{bearer: []}]\npaths: {}", "security[0]: security scheme bearer is not defined")
        try expectProblem("paths: {/a: {get: {operationId: a, security: [{}, {key: []}], responses: {'204': {description: x}}}}}",
                          #"paths["/a"].get.security[1]: security scheme key is not defined"#)
        #expect(try lint("security: [{bearer: []}]\npaths: {}\ncomponents: {securitySchemes: {bearer: {type: http, scheme: bearer}}}") == [])
    }

    @Test func responsesAndPaths() throws {
        try expectProblem("paths: {/a: {get: {operationId: a, responses: {'200': {content: {}}}}}}", #"paths["/a"].get.responses["200"]: response has no description"#)
        try expectProblem("paths: {/a: {get: {operationId: a, responses: {'600': {description: x}}}}}", "600 is not a status code")
        try expectProblem("paths: {/a: {get: {operationId: a}}}", "GET /a: no responses")
        try expectProblem("paths: {/a: {get: {operationId: a, responses: {'200': {description: x, content: {application/json: {}}}}}}}", "JSON content without a schema")
        try expectProblem("paths: {/a: {gett: {operationId: a}}}", "unknown key gett")
        try expectProblem("""
        paths:
          /a/{x}: {parameters: [{name: x, in: path, required: true}]}
          /a/{y}: {parameters: [{name: y, in: path, required: true}]}
        """, #"paths["/a/{y}"]: same path as /a/{x}"#)
        try expectProblem("components: {responses: {R: {content: {}}}}\npaths: {}", "components.responses.R: response has no description")
    }

    @Test func schemaLevelExamplesDefaultsAndEnums() throws {
        try expectProblem("""
        paths: {}
        components:
          schemas:
            Then:
              type: object
              properties: {persistence: {type: string, enum: [none, forSession]}}
              example: {persistence: forever}
        """, #"components.schemas.Then.example: $.persistence: "forever" is not one of none, forSession"#)
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {type: string, format: uuid, examples: [3f2b8c9e-1d4a-4b6f-9c2e-7a1b0c3d4e5f, nope]}}}",
                          #"components.schemas.A.examples[1]: $: "nope" is not a valid uuid"#)
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {type: integer, minimum: 1, default: 0}}}", "components.schemas.A.default: $: 0 is less than minimum 1")
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {type: string, enum: [a, 1]}}}", "components.schemas.A.enum[1]: $: expected string, got integer 1")
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {properties: {b: {type: integer, example: x}}}}}", "components.schemas.A.properties.b.example: $: expected integer")
    }

    @Test func mediaTypeParameterAndHeaderExamples() throws {
        let spec = """
        paths:
          /a:
            post:
              operationId: a
              parameters:
                - {name: n, in: query, schema: {type: integer}, example: ten}
              requestBody:
                content:
                  application/json:
                    schema: {type: object, required: [x]}
                    example: {y: 1}
              responses:
                '200':
                  description: ok
                  headers:
                    Retry-After: {schema: {type: integer}, example: soon}
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/S"}
                      examples:
                        good: {value: {id: 1}}
                        bad: {value: {id: "1"}}
                        shared: {$ref: "#/components/examples/Shared"}
                        empty: {summary: nothing}
        components:
          schemas:
            S: {type: object, properties: {id: {type: integer}}}
          examples:
            Shared: {value: {id: 2.5}}
        """
        let found = try lint(spec)
        #expect(found == [
            #"paths["/a"].post.parameters[0].example: $: expected integer, got string "ten""#,
            #"paths["/a"].post.requestBody.content["application/json"].example: $: missing required property "x""#,
            #"paths["/a"].post.responses["200"].content["application/json"].examples.bad: $.id: expected integer, got string "1""#,
            #"paths["/a"].post.responses["200"].content["application/json"].examples.empty: example has neither value nor externalValue"#,
            #"paths["/a"].post.responses["200"].content["application/json"].examples.shared: $.id: expected integer, got number 2.5"#,
            #"paths["/a"].post.responses["200"].headers["Retry-After"].example: $: expected integer, got string "soon""#,
        ])
    }

    @Test func schemaShape() throws {
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {type: strin}}}", "components.schemas.A: unknown type \"strin\"")
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {type: string, pattern: \"[a-\"}}}", "is not a valid regular expression")
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {type: string, nullable: true}}}", "nullable is OpenAPI 3.0")
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {type: object, unevaluatedItems: false}}}", "unsupported keyword unevaluatedItems")
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {type: string, description: Trust anchors, PEM.}}}",
                          "components.schemas.A: stray key PEM. with no value; a comma inside an unquoted flow-style string?")
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {type: object, additionalProperties: false, required: [a]}}}",
                          "required property a is not in properties, and additionalProperties is false")
        try expectProblem("paths: {}\ncomponents: {schemas: {A: {oneOf: [{$ref: \"#/components/schemas/B\"}], discriminator: {propertyName: k, mapping: {b: \"#/components/schemas/Nope\"}}}, B: {}}}",
                          "discriminator mapping b → \"#/components/schemas/Nope\" does not resolve")
        #expect(try OpenAPIContract.load(yaml: "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}").lint() == ["openapi: 3.0.3 is not 3.1.x"])
        #expect(try lint("paths: {}\ncomponents: {schemas: {A: {type: object, x-internal: true, properties: {a: {type: [string, \"null\"]}}}}}") == [])
    }
}

// MARK: - The repository's spec

@Suite struct OpenAPISpecLintTests {
    /// CI's guard on openapi.yaml itself: references resolve, ids are unique, examples are true.
    @Test func repositorySpecLintsClean() throws {
        let contract = try OpenAPIContract.repository()
        for problem in contract.lint() { Issue.record(Comment(rawValue: problem)) }
    }
}
