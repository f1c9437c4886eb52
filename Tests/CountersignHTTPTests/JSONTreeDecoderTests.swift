import CountersignCore
@testable import CountersignHTTP
import Foundation
import Testing

/// Request bodies decode into the API's types with the errors clients have always had, and
/// every member nobody read is an unknown field.
@Suite("Request JSON: decoding")
struct JSONTreeDecoderTests {
    /// The core's JSON value (the contract checker in this target has its own `JSONValue`).
    typealias Payload = CountersignCore.JSONValue

    struct Inner: Decodable, Equatable {
        var a: Int
        var b: String?
    }

    struct Shapes: Decodable, Equatable {
        var inner: Inner?
        var list: [Inner]?
        var nested: [[Inner]]?
        var strings: [String]?
        var optionals: [String?]?
        var headers: [String: String]?
        var date: Date?
        var id: UUID?
        var int32: Int32?
        var uint16: UInt16?
        var int64: Int64?
        var double: Double?
        var flag: Bool?
        var any: Payload?
    }

    struct Required: Decodable {
        var inner: Inner
        var count: Int
        var flag: Bool
        var id: UUID
        var date: Date
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONBody.decode(type, from: Array(text.utf8))
    }

    static func failure<T: Decodable>(_ type: T.Type, _ text: String) -> String {
        do {
            _ = try decode(type, text)
            return "decoded"
        } catch let error as CountersignError {
            return "\(error.code.rawValue): \(error.message)"
        } catch {
            return "not a CountersignError: \(error)"
        }
    }

    static let space = #""protectionSpace": {"host": "h", "port": 1, "authenticationMethod": "x"}"#

    @Test func theBenchmarkChallengeDecodes() throws {
        let challenge = try Self.decode(
            Challenge.self,
            #"{"taskId":"bench","protectionSpace":{"host":"intranet.example.com","port":443,"protocol":"https","realm":"Intranet","authenticationMethod":"NSURLAuthenticationMethodHTTPBasic"}}"#
        )
        #expect(challenge == Challenge(
            taskId: "bench",
            protectionSpace: ProtectionSpace(host: "intranet.example.com", port: 443, protocolName: "https", realm: "Intranet", authenticationMethod: .httpBasic)
        ))
    }

    @Test func everyShapeDecodes() throws {
        let shapes = try Self.decode(Shapes.self, #"""
            {"inner": {"a": 1}, "list": [{"a": 2, "b": "x"}, {"a": 3, "b": null}], "nested": [[], [{"a": 4}]],
             "strings": ["s", ""], "optionals": ["o", null], "headers": {"Content-Type": "text/html", "X": ""},
             "date": "2024-01-02T03:04:05.123Z", "id": "e621e1f8-C36C-495a-93fc-0c247a3e6e5f",
             "int32": -2147483648, "uint16": 65535, "int64": 9223372036854775807, "double": -1.5e-3, "flag": false,
             "any": {"deep": [1, 2.5, "s", null, true, {"k": {}}]}}
            """#)
        #expect(shapes.inner == Inner(a: 1))
        #expect(shapes.list == [Inner(a: 2, b: "x"), Inner(a: 3)])
        #expect(shapes.nested == [[], [Inner(a: 4)]])
        #expect(shapes.strings == ["s", ""])
        #expect(shapes.optionals == ["o", nil])
        #expect(shapes.headers == ["Content-Type": "text/html", "X": ""])
        #expect(abs((shapes.date?.timeIntervalSince1970 ?? 0) - 1_704_164_645.123) < 0.0005)
        #expect(shapes.id == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(shapes.int32 == .min)
        #expect(shapes.uint16 == .max)
        #expect(shapes.int64 == .max)
        #expect(shapes.double == -0.0015)
        #expect(shapes.flag == false)
        let any: Payload = ["deep": [1, .number(2.5), "s", nil, true, ["k": [:]]]]
        #expect(shapes.any == any)
        // Null and absent optionals are both nil.
        #expect(try Self.decode(Shapes.self, #"{"inner": null, "list": null, "any": null}"#) == Shapes())
    }

    @Test(arguments: [
        ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min), ("1.0", 1), ("1e3", 1000), ("1E+3", 1000),
        ("10.0e1", 100), ("0.1e1", 1), ("-0", 0), ("-0.0", 0), ("0e5", 0), ("12300e-2", 123), ("9.223372036854775807e18", Int64.max),
    ] as [(String, Int64)])
    func integersAreReadExactlyWhateverTheirSpelling(text: String, expected: Int64) throws {
        #expect(try Self.decode(Shapes.self, #"{"int64": \#(text)}"#).int64 == expected)
    }

    @Test(arguments: [
        (#"{"int64": 9223372036854775808}"#, "invalid_field: 'int64' is a number out of range"),
        (#"{"int64": -9223372036854775809}"#, "invalid_field: 'int64' is a number out of range"),
        (#"{"int64": 1e19}"#, "invalid_field: 'int64' is a number out of range"),
        (#"{"int64": 1e400}"#, "invalid_field: 'int64' is a number out of range"),
        (#"{"int32": 2147483648}"#, "invalid_field: 'int32' is a number out of range"),
        (#"{"uint16": -1}"#, "invalid_field: 'uint16' is a number out of range"),
        (#"{"uint16": 65536}"#, "invalid_field: 'uint16' is a number out of range"),
        (#"{"int64": 1.5}"#, "invalid_field_type: 'int64' must be an integer"),
        (#"{"int64": 1e-3}"#, "invalid_field_type: 'int64' must be an integer"),
        (#"{"int64": 1.00000000000000000001}"#, "invalid_field_type: 'int64' must be an integer"),
        (#"{"int64": "1"}"#, "invalid_field_type: 'int64' must be an integer"),
        (#"{"int64": true}"#, "invalid_field_type: 'int64' must be an integer"),
        (#"{"double": 1e400}"#, "invalid_field: 'double' is a number out of range"),
        (#"{"double": -1e400}"#, "invalid_field: 'double' is a number out of range"),
        (#"{"double": 1e-400}"#, "invalid_field: 'double' is a number out of range"),
        (#"{"double": "1.5"}"#, "invalid_field_type: 'double' must be a number"),
        (#"{"flag": 1}"#, "invalid_field_type: 'flag' must be a boolean"),
        (#"{"flag": "true"}"#, "invalid_field_type: 'flag' must be a boolean"),
        (#"{"strings": "s"}"#, "invalid_field_type: 'strings' must be an array"),
        (#"{"strings": ["a", 1]}"#, "invalid_field_type: 'strings[1]' must be a string"),
        (#"{"strings": ["a", null]}"#, "missing_field: 'strings[1]' must not be null"),
        (#"{"optionals": ["a", null, 2]}"#, "invalid_field_type: 'optionals[2]' must be a string"),
        (#"{"inner": []}"#, "invalid_field_type: 'inner' must be an object"),
        (#"{"inner": {"a": "1"}}"#, "invalid_field_type: 'inner.a' must be an integer"),
        (#"{"inner": {}}"#, "missing_field: 'inner.a' is required"),
        (#"{"inner": {"a": null}}"#, "missing_field: 'inner.a' must not be null"),
        (#"{"list": [{"a": 1}, 3]}"#, "invalid_field_type: 'list[1]' must be an object"),
        (#"{"list": [{"a": 1}, null]}"#, "missing_field: 'list[1]' must not be null"),
        (#"{"nested": [[{"a": 1}], [{"a": 1}, {"b": "x"}]]}"#, "missing_field: 'nested[1][1].a' is required"),
        (#"{"nested": [1]}"#, "invalid_field_type: 'nested[0]' must be an array"),
        (#"{"headers": {"A": "b", "C": 3}}"#, "invalid_field_type: 'headers.C' must be a string"),
        (#"{"headers": []}"#, "invalid_field_type: 'headers' must be an object"),
        (#"{"date": "2024-01-02"}"#, "invalid_field: 'date' must be an RFC 3339 date-time"),
        (#"{"date": 1704164645}"#, "invalid_field_type: 'date' must be a string"),
        (#"{"id": 5}"#, "invalid_field_type: 'id' must be a string"),
        // A JSON value holding a number no Double keeps: said so, not that it must be an object.
        (#"{"any": 1e400}"#, "invalid_field: 'any' is a number out of range"),
        ("[1, 2]", "invalid_field_type: the body must be an object"),
        (#""text""#, "invalid_field_type: the body must be an object"),
        ("null", "missing_field: the body must not be null"),
    ])
    func mismatchesNameTheField(text: String, expected: String) {
        #expect(Self.failure(Shapes.self, text) == expected, "\(text)")
    }

    @Test(arguments: [
        (#"{}"#, "missing_field: 'inner' is required"),
        (#"{"inner": null}"#, "missing_field: 'inner' must not be null"),
        (#"{"inner": {"a": 1}}"#, "missing_field: 'count' is required"),
        (#"{"inner": {"a": 1}, "count": null}"#, "missing_field: 'count' must not be null"),
        (#"{"inner": {"a": 1}, "count": 1, "flag": null}"#, "missing_field: 'flag' must not be null"),
        (#"{"inner": {"a": 1}, "count": 1, "flag": true, "id": null}"#, "missing_field: 'id' must not be null"),
        (#"{"inner": {"a": 1}, "count": 1, "flag": true, "id": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}"#, "missing_field: 'date' is required"),
        (#"{"inner": {"a": 1}, "count": 1, "flag": true, "id": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "date": null}"#, "missing_field: 'date' must not be null"),
    ])
    func missingAndNullFieldsAreRequired(text: String, expected: String) {
        #expect(Self.failure(Required.self, text) == expected, "\(text)")
    }

    @Test(arguments: [
        "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "00000000-0000-0000-0000-000000000000",
        "E621E1F8C36C495A93FC0C247A3E6E5F", "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}", " E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
        "E621E1F8-C36C-495A-93FC-0C247A3E6E5F ", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5FF",
        "E621E1F8-C36C-495A-93FC0C247A3E6E5F-", "G621E1F8-C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5g", "",
    ])
    func uuidsAreReadAsUUIDStringReadThem(text: String) {
        let expected = UUID(uuidString: text)
        if let expected {
            #expect((try? Self.decode(Shapes.self, #"{"id": "\#(text)"}"#).id) == expected)
        } else {
            #expect(Self.failure(Shapes.self, #"{"id": "\#(text)"}"#) == "invalid_field: 'id' must be a UUID")
        }
    }

    @Test(arguments: [
        (#"{"inner": {"a": 1, "x": 2}}"#, "'inner.x'"),
        (#"{"inner": {"a": 1, "zz": 2, "b2": 3, "aa": 4}}"#, "'inner.aa'"),
        (#"{"list": [{"a": 1}, {"a": 2, "zz": 1, "yy": 2}]}"#, "'list[1].yy'"),
        (#"{"nested": [[{"a": 1}], [{"a": 1, "deep": {}}]]}"#, "'nested[1][0].deep'"),
        (#"{"extra": 1, "inner": {"a": 1, "x": 2}}"#, "'extra'"),
        (#"{"inner": {"a": 1, "x": 2}, "extra": 1}"#, "'extra'"),
        (#"{"list": [{"a": 1, "x": 1}], "inner": {"a": 1, "x": 2}}"#, "'list[0].x'"),
        // A member named by the empty string is named so, not taken for the body.
        (#"{"": 1}"#, #"'""'"#),
        (#"{"inner": {"a": 1, "": 2}}"#, #"'inner.""'"#),
    ])
    func unreadMembersAreUnknownFields(text: String, field: String) {
        #expect(Self.failure(Shapes.self, text) == "unknown_field: \(field) is not a known field", "\(text)")
    }

    @Test func membersOfDictionariesAndJSONValuesAreAllRead() throws {
        let shapes = try Self.decode(Shapes.self, #"{"headers": {"Anything": "x", "At-All": "y"}, "any": {"free": {"form": [{"k": 1}]}}}"#)
        #expect(shapes.headers?.count == 2)
        #expect(shapes.any?["free"]?["form"] == Payload.array([["k": 1]]))
    }

    @Test func theAPIsTypesDecodeAsBefore() throws {
        let challenge = try Self.decode(Challenge.self, #"""
            {"taskId": "t", "protectionSpace": {"host": "h", "port": 443, "protocol": "https", "realm": "r", "authenticationMethod": "NSURLAuthenticationMethodServerTrust",
              "isProxy": false, "proxyType": null, "receivesCredentialSecurely": true, "distinguishedNames": ["MA=="], "serverTrust": {"certificates": ["MA=="]}},
             "proposedCredential": {"user": "u", "hasPassword": true}, "previousFailureCount": 2,
             "failureResponse": {"status": 401, "headers": {"WWW-Authenticate": "Basic realm=\"r\""}}, "error": {"domain": "d", "code": -1, "message": "m"}}
            """#)
        #expect(challenge.protectionSpace.serverTrust?.certificates == ["MA=="])
        #expect(challenge.failureResponse?.headers?["WWW-Authenticate"] == #"Basic realm="r""#)
        #expect(challenge.error?.code == -1)

        #expect(Self.failure(Challenge.self, #"{"taskId": "t"}"#) == "missing_field: 'protectionSpace' is required")
        #expect(Self.failure(Challenge.self, #"{"taskId": "t", \#(Self.space), "zzz": 1}"#) == "unknown_field: 'zzz' is not a known field")
        #expect(Self.failure(Challenge.self, #"{"taskId": "t", "protectionSpace": {"host": "h", "port": "443", "authenticationMethod": "x"}}"#)
            == "invalid_field_type: 'protectionSpace.port' must be an integer")
        #expect(Self.failure(Challenge.self, #"{"taskId": "t", "protectionSpace": {"host": "h", "port": 1, "authenticationMethod": null}}"#)
            == "missing_field: 'protectionSpace.authenticationMethod' must not be null")

        // String enums keep their own error, with the path.
        #expect(Self.failure(PolicyController.PolicyDocument.self, #"{"version": 0, "rules": [{"id": "r", "match": {}, "then": {"disposition": "maybe"}}]}"#)
            .hasPrefix("invalid_enum_value: 'rules[0].then.disposition' must be one of "))
        #expect(Self.failure(PolicyController.PolicyDocument.self, #"{"version": 0, "rules": [], "updatedAt": "yesterday"}"#)
            == "invalid_field: 'updatedAt' must be an RFC 3339 date-time")
        #expect(Self.failure(PolicyController.PolicyDocument.self, #"{"version": 0, "rules": [], "settings": {"preferredSchemes": ["Basic", 1]}}"#)
            == "invalid_field_type: 'settings.preferredSchemes[1]' must be a string")
        #expect(Self.failure(PolicyController.PolicyDocument.self, #"{"version": 0, "rules": [{"id": "r", "match": {}, "then": {"disposition": "rejectProtectionSpace", "trust": {"q": 1}}}]}"#)
            == "unknown_field: 'rules[0].then.trust.q' is not a known field")
        #expect(Self.failure(PolicyController.Explain.self, #"{"challenge": {"taskId": "t", \#(Self.space)}, "sessionId": "nope"}"#)
            == "invalid_field: 'sessionId' must be a UUID")

        // A field that is present and null is not a field left out.
        let update = try Self.decode(CredentialController.UpdateCredential.self, #"{"port": null, "realm": "r"}"#)
        #expect(update.port == .some(nil))
        #expect(update.realm == .some("r"))
        #expect(update.path == .none)

        // A JSON value keeps null as a value.
        #expect(try Self.decode(SecurityCheckController.ChallengeList.self, #"{"challenges": null}"#).challenges == .null)
        #expect(Self.failure(SecurityCheckController.ChallengeList.self, #"{"challenges": {}, "taskId": "t"}"#) == "unknown_field: 'taskId' is not a known field")
    }
}
