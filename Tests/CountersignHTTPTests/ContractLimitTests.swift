import Foundation
import HTTPTypes
import Testing

/// The limits the request schemas declare are the service's: a request example changed to just
/// inside or just outside a limit is judged alike by openapi.yaml and by the service (2xx or 400).
/// A client that builds its requests from the contract is never refused for a limit it could not
/// read, and a limit the contract declares is one the service keeps.
// Serialized, one service per example: the cases at once would take more of the shared test
// database's connections than the other suites leave.
@Suite("OpenAPI contract: limits", .serialized)
struct ContractLimitTests {
    /// An example with some of its members changed, and whether the result is a valid request.
    struct Case: Sendable, CustomStringConvertible {
        /// `operationId` of the example, then its name: `decideChallenge basic`.
        let example: String
        let changes: [(path: String, value: JSONValue)]
        let accepted: Bool

        init(_ example: String, _ changes: [(String, JSONValue)], _ accepted: Bool) {
            self.example = example
            self.changes = changes.map { (path: $0.0, value: $0.1) }
            self.accepted = accepted
        }

        init(_ example: String, _ path: String, _ value: JSONValue, _ accepted: Bool) {
            self.init(example, [(path, value)], accepted)
        }

        var description: String {
            "\(example) with " + changes.map { "\($0.path) = \($0.value.shortDescription)" }.joined(separator: ", ")
                + (accepted ? " is taken" : " is refused")
        }
    }

    static func text(_ character: String, _ count: Int) -> JSONValue { .string(String(repeating: character, count: count)) }

    static let uuid = JSONValue.string("6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d")

    static let cases: [Case] = [
        // Names (Validation.name): 1 to 200 characters, counted as Unicode scalars; not blank; no control character.
        Case("createTenant example", "name", text("a", 200), true),
        Case("createTenant example", "name", text("é", 200), true),
        Case("createTenant example", "name", text("a", 201), false),
        Case("createTenant example", "name", "", false),
        Case("createTenant example", "name", " \u{3000}\u{A0}", false),
        Case("createTenant example", "name", "ac\u{A0}me", true),
        Case("createTenant example", "name", "ac\u{1}me", false),
        Case("createTenant example", "name", "acme\u{7F}", false),
        Case("createTenant example", "name", "acme\u{85}", false),
        Case("createTenant example", "name", "acme\n", false),
        Case("createTenant example", "name", "ac\u{0}me", false),
        Case("createTenant example", "colour", "blue", false),
        Case("createTenantAdminKey example", "name", "first\tadmin", false),
        Case("createKey example", "name", text("k", 201), false),
        Case("createKey example", "role", "operator", false),
        // Sessions.
        Case("openSession example", "clientId", text("c", 201), false),
        Case("openSession example", "clientId", "ios\u{1F}", false),
        Case("openSession example", "label", text("l", 200), true),
        Case("openSession example", "label", text("l", 201), false),
        Case("openSession example", "label", "", true),
        Case("openSession example", "label", "main\tURLSession", false),
        Case("openSession example", "ttlSeconds", 0, false),
        Case("openSession example", "ttlSeconds", .number(1.8446744073709552e19), false),
        Case("invalidateSession example", "mode", "later", false),
        // Challenges.
        Case("decideChallenge basic", "taskId", text("t", 200), true),
        Case("decideChallenge basic", "taskId", text("t", 201), false),
        Case("decideChallenge basic", "taskId", "", false),
        Case("decideChallenge basic", "taskId", "task\u{9F}", false),
        Case("decideChallenge basic", "protectionSpace.host", text("h", 253), true),
        Case("decideChallenge basic", "protectionSpace.host", text("h", 254), false),
        Case("decideChallenge basic", "protectionSpace.host", "intranet..example.com", false),
        Case("decideChallenge basic", "protectionSpace.host", ".example.com", false),
        Case("decideChallenge basic", "protectionSpace.host", "intranet.example.com.", true),
        Case("decideChallenge basic", "protectionSpace.host", "intra net.example.com", false),
        Case("decideChallenge basic", "protectionSpace.host", "intranet/example.com", false),
        Case("decideChallenge basic", "protectionSpace.host", "[2001:db8::1]", true),
        Case("decideChallenge basic", "protectionSpace.host", "[fe80::1%25en0]", true),
        Case("decideChallenge basic", "protectionSpace.host", "[intranet]", false),
        Case("decideChallenge basic", "protectionSpace.port", 65536, false),
        Case("decideChallenge basic", "protectionSpace.protocol", text("p", 32), true),
        Case("decideChallenge basic", "protectionSpace.protocol", text("p", 33), false),
        Case("decideChallenge basic", "protectionSpace.protocol", "", false),
        Case("decideChallenge basic", "protectionSpace.protocol", " ", false),
        Case("decideChallenge basic", "protectionSpace.realm", text("r", 1000), true),
        Case("decideChallenge basic", "protectionSpace.realm", text("r", 1001), false),
        Case("decideChallenge basic", "protectionSpace.realm", "", true),
        Case("decideChallenge basic", "protectionSpace.realm", "Intra\u{85}net", false),
        Case("decideChallenge basic", "protectionSpace.proxyType", "https", true),
        Case("decideChallenge basic", "protectionSpace.proxyType", "", false),
        Case("decideChallenge basic", "protectionSpace.proxyType", text("p", 33), false),
        Case("decideChallenge basic", "protectionSpace.proxyType", "ht\rtp", false),
        Case("decideChallenge basic", "protectionSpace.authenticationMethod", "", true),
        Case("decideChallenge basic", "protectionSpace.authenticationMethod", text("m", 200), true),
        Case("decideChallenge basic", "protectionSpace.authenticationMethod", text("m", 201), false),
        Case("decideChallenge basic", "protectionSpace.authenticationMethod", "NSURLAuthenticationMethod\u{1}", false),
        Case("decideChallenge basic", "protectionSpace.colour", "blue", false),
        Case("decideChallenge basic", "proposedCredential", ["user": text("u", 1000)], true),
        Case("decideChallenge basic", "proposedCredential", ["user": text("u", 1001)], false),
        Case("decideChallenge basic", "proposedCredential", ["user": ""], true),
        Case("decideChallenge basic", "proposedCredential", ["user": "svc\u{8}"], false),
        Case("decideChallenge basic", "previousFailureCount", 1_000_000, true),
        Case("decideChallenge basic", "previousFailureCount", 1_000_001, false),
        Case("decideChallenge basic", "previousFailureCount", -1, false),
        Case("decideChallenge basic", "previousFailureCount", .number(1.8446744073709552e19), false),
        Case("decideChallenge basic", "failureResponse.headers", .object(Dictionary(uniqueKeysWithValues: (0..<200).map { ("X-\($0)", JSONValue.string("v")) })), true),
        Case("decideChallenge basic", "failureResponse.headers", .object(Dictionary(uniqueKeysWithValues: (0..<201).map { ("X-\($0)", JSONValue.string("v")) })), false),
        Case("decideChallenge basic", "failureResponse.status", 600, false),
        Case("decideChallenge basic", "error", ["code": .integer(.max), "domain": "NSURLErrorDomain"], true),
        Case("decideChallenge basic", "error", ["code": .number(9.3e18)], false),
        Case("decideChallenge basic", "error", ["colour": "blue"], false),
        Case("decideChallenge clientCertificate", "protectionSpace.distinguishedNames", [""], false),
        Case("decideChallenge serverTrust", "protectionSpace.serverTrust.certificates", [""], false),
        Case("explainPolicy example", "clientId", "any\u{1}thing", false),
        Case("explainPolicy example", "clientId", text("c", 200), true),
        Case("explainPolicy example", "clientId", text("c", 201), false),
        Case("explainPolicy example", "clientId", " ", false),
        Case("explainPolicy example", "challenge.taskId", "", false),
        Case("explainPolicy example", "challenge.previousFailureCount", 1_000_001, false),
        // Credentials clients submit.
        Case("submitCredential example", "user", text("u", 1000), true),
        Case("submitCredential example", "user", text("u", 1001), false),
        Case("submitCredential example", "user", "", false),
        Case("submitCredential example", "user", " ", false),
        Case("submitCredential example", "domain", text("d", 256), true),
        Case("submitCredential example", "domain", text("d", 257), false),
        Case("submitCredential example", "domain", "", false),
        Case("submitCredential example", "domain", "CORP\u{7F}", false),
        Case("submitCredential example", "password", text("p", 4096), true),
        Case("submitCredential example", "password", text("p", 4097), false),
        Case("submitCredential example", "password", "typed\u{1}by-alice", true),
        Case("submitCredential example", "protectionSpace.authenticationMethod", "NSURLAuthenticationMethodServerTrust", false),
        Case("submitCredential example", "protectionSpace.authenticationMethod", "NSURLAuthenticationMethodNTLM", true),
        // Credentials admins save: closed objects, keyed by exact hosts.
        Case("saveCredential example", "colour", "blue", false),
        Case("saveCredential example", "host", "*.example.com", false),
        Case("saveCredential example", "host", "intranet..example.com", false),
        Case("saveCredential example", "account", text("a", 1000), true),
        Case("saveCredential example", "account", text("a", 1001), false),
        Case("saveCredential example", "account", "\u{2003}", false),
        Case("saveCredential example", "domain", text("d", 256), true),
        Case("saveCredential example", "domain", text("d", 257), false),
        Case("saveCredential example", "domain", "", false),
        Case("saveCredential example", "label", text("l", 200), true),
        Case("saveCredential example", "label", text("l", 201), false),
        Case("saveCredential example", "label", "Intranet\naccount", false),
        Case("saveCredential example", "path", text("/", 2000), true),
        Case("saveCredential example", "path", text("/", 2001), false),
        Case("saveCredential example", "protocol", text("p", 33), false),
        Case("saveCredential example", "realm", text("r", 1001), false),
        Case("saveCredential example", "port", -1, false),
        Case("saveCredential example", "authenticationMethod", "NSURLAuthenticationMethodKerberos", false),
        Case("saveCredential example", "password", text("p", 4097), false),
        Case("updateCredential example", "colour", "blue", false),
        Case("updateCredential example", "isProxy", .null, false),
        Case("updateCredential example", "account", .null, false),
        Case("updateCredential example", "host", .null, false),
        Case("updateCredential example", "password", .null, false),
        Case("updateCredential example", "account", text("a", 1001), false),
        Case("updateCredential example", "domain", "", false),
        // Policies.
        Case("replacePolicy example", "rules[0].name", text("n", 200), true),
        Case("replacePolicy example", "rules[0].name", text("n", 201), false),
        Case("replacePolicy example", "rules[0].name", "", false),
        Case("replacePolicy example", "rules[0].name", "Intranet\u{1}", false),
        Case("replacePolicy example", "rules[0].id", "intranet rule", false),
        Case("replacePolicy example", "rules[0].match.protocol", text("p", 32), true),
        Case("replacePolicy example", "rules[0].match.protocol", text("p", 33), false),
        Case("replacePolicy example", "rules[0].match.realm", text("r", 1001), false),
        Case("replacePolicy example", "rules[0].match.host", "", false),
        Case("replacePolicy example", "rules[0].match.host", text("h", 253), true),
        Case("replacePolicy example", "rules[0].match.host", text("h", 254), false),
        Case("replacePolicy example", "rules[0].match.host", "**.example.com", false),
        Case("replacePolicy example", "rules[0].match.host", "*.example.com.", false),
        Case("replacePolicy example", "rules[0].match.host", "[2001:db8::*]", true),
        Case("replacePolicy example", "rules[0].match.host", "\u{212A}iosk.example.com", false),
        Case("replacePolicy example", "rules[0].match.host", "Kiosk.example.com", true),
        Case("replacePolicy example", "rules[0].match.host", "münchen.example.com", false),
        Case("replacePolicy example", "rules[0].match.methods", ["NSURLAuthenticationMethodHTTPBasic", "NSURLAuthenticationMethodHTTPBasic"], false),
        Case("replacePolicy example", "rules[0].then.account", text("a", 1000), true),
        Case("replacePolicy example", "rules[0].then.account", text("a", 1001), false),
        Case("replacePolicy example", "rules[0].then.credentialId", uuid, false),
        Case("replacePolicy example", "rules[0].then.blockSeconds", 0, false),
        Case("replacePolicy example", [("rules[0].then.blockSeconds", 31_536_000), ("rules[0].then.maxBlockSeconds", 31_536_000)], true),
        Case("replacePolicy example", "rules[0].then.maxBlockSeconds", 31_536_001, false),
        Case("replacePolicy example", "rules[0].then.blockIncrementSeconds", 31_536_000, true),
        Case("replacePolicy example", "rules[0].then.blockIncrementSeconds", 31_536_001, false),
        Case("replacePolicy example", "rules[0].then.maxFailures", 10_001, false),
        Case("replacePolicy example", "rules[0].then.blockedDisposition", "useCredential", false),
        Case("replacePolicy example", "rules[0].then.failureDisposition", "rejectProtectionSpace", true),
        Case("replacePolicy example", "rules[0].then.clientPersistences", ["none", "none"], false),
        Case("replacePolicy example", "rules[0].then.trust", ["pins": ["VO2gwqy2M+x6Dvu9Ki/L4EYSQ1KqNGJakTgyrHldJ2Q="]], true),
        Case("replacePolicy example", "rules[0].then.trust", ["pins": ["VO2gwqy2M+x6Dvu9Ki/L4EYSQ1KqNGJakTgyrHldJ2Q"]], false),
        Case("replacePolicy example", "rules[0].then.trust", ["anchors": .array(Array(repeating: .string(ContractExampleTests.exampleCA), count: 101))], false),
        Case("replacePolicy example", "settings.maxSessionTTLSeconds", 31_536_000, true),
        Case("replacePolicy example", "settings.maxSessionTTLSeconds", 31_536_001, false),
        Case("replacePolicy example", [("settings.defaultSessionTTLSeconds", 31_536_000), ("settings.maxSessionTTLSeconds", 31_536_000)], true),
        Case("replacePolicy example", "settings.defaultSessionTTLSeconds", 31_536_001, false),
        Case("replacePolicy example", "securityChecks[0].blockSeconds", 31_536_000, true),
        Case("replacePolicy example", "securityChecks[0].blockSeconds", 31_536_001, false),
        Case("replacePolicy example", "securityChecks[0].attemptingStateExpirationSec", 31_536_001, false),
        Case("replacePolicy example", "securityChecks[0].successStateExpirationSec", 31_536_001, false),
        Case("replacePolicy example", "securityChecks[0].blockedStateExpirationSec", 31_536_000, true),
        Case("replacePolicy example", "securityChecks[0].blockedStateExpirationSec", 31_536_001, false),
        Case("replacePolicy example", "securityChecks[0].maxAttempts", 1001, false),
        Case("replacePolicy example", "securityChecks[0].persistence", "permanent", false),
        Case("replacePolicy example", "securityChecks[0].answer", ["": "$secret"], false),
        Case("replacePolicy example", "securityChecks[0].answer", [String(repeating: "p", count: 101): "$secret"], false),
        Case("replacePolicy example", "securityChecks[0].answer", ["p\u{1}n": "$secret"], false),
        Case("replacePolicy example", "securityChecks[0].credentialId", .null, false),
        Case("replacePolicy example", "securityChecks[2].persistence", "none", false),
        Case("replacePolicy example", "version", .number(9.3e18), false),
        // Raw responses.
        Case("answerRawResponse digest", "headers[3][0]", "Content Type", false),
        Case("answerRawResponse digest", "headers[3][0]", text("h", 257), false),
        Case("answerRawResponse digest", "request.method", "GE T", false),
        Case("answerRawResponse digest", "request.url", "https://www.example.org/dir/index .html", false),
        Case("answerRawResponse digest", "request.url", "ftp://www.example.org/dir/index.html", false),
        Case("answerRawResponse digest", "request.url", "https://www.example.org/dir/\u{9B}index.html", false),
        Case("answerRawResponse digest", "request.url", "https://www.example.org/dir/índex.html", true),
        Case("answerRawResponse digest", "request.requestTarget", "/dir/index.html", true),
        Case("answerRawResponse digest", "request.requestTarget", "", false),
        Case("answerRawResponse digest", "request.bodyHash", ["algorithm": "MD5", "value": text("0", 33)], false),
        Case("answerRawResponse digest", [("request.bodyHash", ["algorithm": "MD5", "value": text("0", 32)]), ("request.body", "")], false),
        Case("answerRawResponse digest", "proxy", ["host": "proxy.corp.example.com", "port": 3128], false),
        Case("answerRawResponse proxy", "proxy", .null, false),
        Case("answerRawResponse proxy", "proxy.host", "proxy..corp.example.com", false),
        Case("answerRawResponse proxy", "proxy.port", 0, false),
        // Identities.
        Case("uploadIdentity pem", "label", text("l", 200), true),
        Case("uploadIdentity pem", "label", text("l", 201), false),
        Case("uploadIdentity pem", "password", "export-password", false),
        Case("uploadIdentity pkcs12", "privateKey", "-----BEGIN PRIVATE KEY-----", false),
        Case("uploadIdentity pkcs12", "password", .null, false),
        // Outcomes and security checks.
        Case("reportOutcome example", "upstreamStatus", 599, true),
        Case("reportOutcome example", "upstreamStatus", 600, false),
        Case("resetSecurityCheckState example", "clientId", "ios-7F3A\u{1}", false),
        Case("resetSecurityCheckState example", "securityCheck", "PinCode Attempts", false),
    ]

    /// The examples the cases change, in the order the cases name them.
    static let examples: [String] = cases.map(\.example).reduce(into: []) { if !$0.contains($1) { $0.append($1) } }

    @Test(arguments: examples)
    func theContractAndTheServiceAgree(on name: String) async throws {
        let example = try #require(ContractExampleTests.examples.first { $0.testDescription == name }, "no example \(name)")
        try await TestService.run { api in
            // Each case on a fresh setup (its own tenant): a case the service takes changes what the next one meets.
            for limit in Self.cases where limit.example == name {
                var request = try await ContractExampleTests.prepare(example, api)
                for change in limit.changes { request.body = request.body.setting(JSONValue.steps(change.path), to: change.value) }
                let problems = TestAPI.contract.validateRequest(method: example.method, path: request.path, body: Data(request.body.description.utf8))
                #expect(problems.isEmpty == limit.accepted, "\(limit): the contract \(limit.accepted ? "refuses" : "takes") it: \(problems)")
                let reply = try await api.call(HTTPRequest.Method(example.method)!, request.path, key: request.key, json: request.body.description)
                if limit.accepted {
                    #expect((200..<300).contains(reply.status), "\(limit): the service refuses it: \(reply)")
                } else {
                    #expect(reply.status == 400, "\(limit): the service does not refuse it: \(reply)")
                }
            }
        }
    }
}

extension JSONValue {
    /// The steps of a path written `rules[0].then.account` or `headers[3][0]`.
    static func steps(_ path: String) -> [Step] {
        path.split(separator: ".").flatMap { part -> [Step] in
            let pieces = part.split(separator: "[")
            var steps: [Step] = pieces.first.map { part.hasPrefix("[") ? [] : [.member(String($0))] } ?? []
            for piece in pieces.dropFirst(part.hasPrefix("[") ? 0 : 1) {
                if let index = Int(piece.dropLast()) { steps.append(.item(index)) }
            }
            return steps
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .integer(value) }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(Dictionary(uniqueKeysWithValues: elements)) }
}
