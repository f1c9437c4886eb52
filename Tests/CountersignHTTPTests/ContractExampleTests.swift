import Foundation
import HTTPTypes
import Testing

/// The contract's request examples are requests the service takes: each one, sent as written to a
/// service set up so that it can succeed, is answered 2xx, and the answer conforms to the spec as
/// every answer in these tests does (`TestAPI.call`). Clients copy examples first; one the service
/// refuses teaches them a request that fails. The same holds with `null` for every member an example
/// leaves out where the spec lets it be null: the schemas say that null reads as left out.
// Serialized: each example gets services of its own, and all at once they would take more of the
// shared test database's connections than the other suites leave.
@Suite("OpenAPI contract: request examples", .serialized)
struct ContractExampleTests {
    /// One request example of one operation.
    struct Example: Sendable, CustomTestStringConvertible {
        let operationId: String
        let method: String
        /// `example` for a media type's single example, else its name in `examples`.
        let name: String
        let value: JSONValue
        /// The schema of the request body.
        let schema: JSONValue

        var testDescription: String { "\(operationId) \(name)" }
    }

    /// Every request example of openapi.yaml, by operation.
    static let examples: [Example] = {
        let contract = TestAPI.contract
        return contract.allOperations().flatMap { operation -> [Example] in
            guard let body = operation.definition["requestBody"].map(contract.resolved),
                  let media = body["content"]?["application/json"]
            else { return [] }
            let id = operation.operationId ?? "\(operation.method) \(operation.pathTemplate)"
            let schema = media["schema"] ?? .bool(true)
            var found: [Example] = []
            if let value = media["example"] {
                found.append(Example(operationId: id, method: operation.method, name: "example", value: value, schema: schema))
            }
            for (name, raw) in (media["examples"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                if let value = contract.resolved(raw)["value"] {
                    found.append(Example(operationId: id, method: operation.method, name: name, value: value, schema: schema))
                }
            }
            return found
        }
    }()

    @Test func everyOperationThatTakesABodyHasAnExample() {
        for operation in TestAPI.contract.allOperations() where operation.definition["requestBody"] != nil {
            #expect(Self.examples.contains { $0.operationId == operation.operationId }, "\(operation.method) \(operation.pathTemplate) has no request example")
        }
    }

    @Test(arguments: examples)
    func theServiceTakesTheExample(_ example: Example) async throws {
        try await TestService.run { api in
            try await Self.send(try await Self.prepare(example, api), for: example, api)
        }
        // On a service of its own: some examples create what exists once (a tenant's name).
        try await TestService.run { api in
            var request = try await Self.prepare(example, api)
            request.body = Self.withNulls(request.body, schema: example.schema)
            try await Self.send(request, for: example, api, "with null for what it leaves out")
        }
    }

    static func send(_ request: Request, for example: Example, _ api: TestAPI, _ variant: String = "as written") async throws {
        let label = "\(example.testDescription) \(variant)"
        let problems = TestAPI.contract.validateRequest(method: example.method, path: request.path, body: Data(request.body.description.utf8))
        #expect(problems.isEmpty, "the request built from \(label) does not conform to the spec: \(problems)")
        let reply = try await api.call(HTTPRequest.Method(example.method)!, request.path, key: request.key, json: request.body.description)
        #expect((200..<300).contains(reply.status), "\(label): \(reply)\nsent \(request.body)")
        request.check(reply)
    }

    // MARK: - Setting the service up for each example

    /// What to send for an example: where, with which key, the body (the example, or the example with
    /// the ids of objects the test created), and what else the answer must show.
    struct Request {
        var path: String
        var key: String
        var body: JSONValue
        var check: (Reply) -> Void = { _ in }
    }

    // The operations whose path names an object (a tenant, session, credential, decision) get the
    // object the test created first; the bodies are the examples as written, except where an example
    // names an object by id, which the comment at the substitution says.
    static func prepare(_ example: Example, _ api: TestAPI) async throws -> Request {
        let body = example.value
        switch example.operationId {
        case "createTenant":
            return Request(path: "/v1/tenants", key: TestService.operatorKey, body: body)
        case "createTenantAdminKey":
            let tenant = try await api.tenant()
            return Request(path: "/v1/tenants/\(tenant.id)/keys", key: TestService.operatorKey, body: body)
        case "createKey":
            return Request(path: "/v1/keys", key: try await api.tenant().adminKey, body: body)
        case "openSession":
            return Request(path: "/v1/sessions", key: try await api.tenant().clientKey, body: body)
        case "invalidateSession":
            let tenant = try await api.tenant()
            return Request(path: "/v1/sessions/\(try await api.session(tenant))/invalidate", key: tenant.clientKey, body: body)
        case "decideChallenge":
            let tenant = try await Self.tenantAnsweringTheChallengeExamples(api)
            let session = try await api.session(tenant, clientId: "ios-7F3A")
            return Request(path: "/v1/sessions/\(session)/challenges", key: tenant.clientKey, body: body) { reply in
                // Each example is one the rules above answer with a credential: a real chain, a real CA name.
                guard example.name != "retry" else { return }
                #expect(reply.string("disposition") == "useCredential", "\(example.name): \(reply)")
                if example.name == "serverTrust" { #expect(reply.evaluation?["trusted"] as? Bool == true, "\(reply)") }
                if example.name == "clientCertificate" { #expect(reply.credential?["kind"] as? String == "clientIdentity", "\(reply)") }
            }
        case "answerRawResponse":
            return try await Self.rawResponse(example, api)
        case "submitCredential":
            let tenant = try await api.tenant()
            return Request(path: "/v1/sessions/\(try await api.session(tenant))/credentials", key: tenant.clientKey, body: body)
        case "answerSecurityChecks":
            let tenant = try await Self.tenantWithAPinHandler(api)
            return Request(path: "/v1/sessions/\(try await api.session(tenant))/security-checks", key: tenant.clientKey, body: body) { reply in
                #expect(reply.answer("PinCodeAttempts")?["action"] as? String == "submitChallengeAnswer", "\(reply)")
            }
        case "reportSecurityCheckFailure", "reportSecurityCheckSuccess":
            // A report is about an answer given in the session: the PIN check is answered first.
            let tenant = try await Self.tenantWithAPinHandler(api)
            let session = try await api.session(tenant)
            let answered = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 3, "errorMsg": null}}"#)
            try #require(answered.status == 200, "\(answered)")
            let kind = example.operationId == "reportSecurityCheckFailure" ? "failure" : "success"
            return Request(path: "/v1/sessions/\(session)/security-checks/PinCodeAttempts/\(kind)", key: tenant.clientKey, body: body)
        case "reportOutcome":
            // An outcome is about a decision: the intranet credential is released first.
            let tenant = try await Self.tenantAnsweringTheChallengeExamples(api)
            let session = try await api.session(tenant)
            let decided = try await api.challenge(tenant, session: session, taskId: "task-17")
            #expect(decided.string("disposition") == "useCredential", "\(decided)")
            return Request(path: "/v1/decisions/\(try #require(decided.string("decisionId")))/outcome", key: tenant.clientKey, body: body)
        case "saveCredential":
            return Request(path: "/v1/credentials", key: try await api.tenant().adminKey, body: body)
        case "updateCredential":
            let tenant = try await api.tenant()
            return Request(path: "/v1/credentials/\(try await api.credential(tenant))", key: tenant.adminKey, body: body)
        case "uploadIdentity":
            return Request(path: "/v1/identities", key: try await api.tenant().adminKey, body: body)
        case "replacePolicy":
            // The example's security-check handlers name tenant credentials by id: here, two the test saved.
            let tenant = try await api.tenant()
            var handlers = try #require(body["securityChecks"]?.arrayValue)
            for index in handlers.indices where handlers[index]["credentialId"] != nil {
                let id = try await api.credential(tenant, account: "handler-\(index)")
                handlers[index] = handlers[index].setting("credentialId", to: .string(id))
            }
            return Request(path: "/v1/policy", key: tenant.adminKey, body: body.setting("securityChecks", to: .array(handlers)))
        case "explainPolicy":
            return Request(path: "/v1/policy/explain", key: try await api.tenant().adminKey, body: body)
        case "resetSecurityCheckState":
            // A state to reset: the example's client was challenged for the example's check.
            let tenant = try await Self.tenantWithAPinHandler(api)
            let clientId = try #require(body["clientId"]?.stringValue)
            let check = try #require(body["securityCheck"]?.stringValue)
            let answered = try await api.securityChecks(
                tenant, session: try await api.session(tenant, clientId: clientId), #"{"\#(check)": {"remainingAttempts": 3, "errorMsg": null}}"#
            )
            try #require(answered.status == 200, "\(answered)")
            return Request(path: "/v1/security-checks/states/reset", key: tenant.adminKey, body: body)
        default:
            Issue.record("no setup for the request examples of \(example.operationId): add one to ContractExampleTests.prepare")
            return Request(path: "/", key: "", body: body)
        }
    }

    /// A tenant whose policy answers the `decideChallenge` examples with credentials: the intranet's
    /// Basic password, trust in the TLS server's chain (issued by the examples' CA), and the client
    /// identity of the `uploadIdentity` example `pem` (issued by the same CA) for mtls.example.com.
    static func tenantAnsweringTheChallengeExamples(_ api: TestAPI) async throws -> TestAPI.Tenant {
        let tenant = try await api.tenant()
        _ = try await api.credential(tenant, host: "intranet.example.com", account: "svc-intranet", password: "s3cret-from-the-vault")
        let identity = try #require(Self.examples.first { $0.operationId == "uploadIdentity" && $0.name == "pem" })
        let uploaded = try await api.call(.post, "/v1/identities", key: tenant.adminKey, json: identity.value.description)
        try #require(uploaded.status == 201, "\(uploaded)")
        let anchors = JSONValue.array([.string(Self.exampleCA)]).description
        try await api.policy(
            tenant,
            rules: """
                [{"id": "intranet", "match": {"host": "intranet.example.com", "methods": ["NSURLAuthenticationMethodHTTPBasic"]},
                  "then": {"disposition": "useCredential", "account": "svc-intranet"}},
                 {"id": "api-pinned", "match": {"host": "api.example.com", "methods": ["NSURLAuthenticationMethodServerTrust"]},
                  "then": {"disposition": "useCredential", "trust": {"anchors": \(anchors), "useSystemAnchors": false}}},
                 {"id": "mtls", "match": {"host": "mtls.example.com", "methods": ["NSURLAuthenticationMethodClientCertificate"]},
                  "then": {"disposition": "useCredential"}}]
                """
        )
        return tenant
    }

    /// A tenant that answers the PIN check `PinCodeAttempts` from a stored credential.
    static func tenantWithAPinHandler(_ api: TestAPI) async throws -> TestAPI.Tenant {
        let tenant = try await api.tenant()
        let pin = try await api.credential(tenant, host: "securitycheck.local", account: "pin", password: "1234")
        try await api.securityCheckHandlers(
            tenant,
            #"[{"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "credentialId": "\#(pin)", "answer": {"pin": "$secret"}, "maxAttempts": 3}]"#
        )
        return tenant
    }

    /// The raw-response examples: Digest for www.example.org, a proxy's 407, and a 403 after the
    /// header the Digest example got.
    static func rawResponse(_ example: Example, _ api: TestAPI) async throws -> Request {
        let tenant = try await api.tenant()
        _ = try await api.credential(tenant, host: "www.example.org", account: "Mufasa", password: "Circle of Life")
        _ = try await api.credential(tenant, json: #""host": "proxy.corp.example.com", "isProxy": true, "account": "svc-proxy", "password": "proxy-secret""#)
        try await api.policy(
            tenant,
            rules: """
                [{"id": "example-org", "match": {"host": "www.example.org"}, "then": {"disposition": "useCredential"}},
                 {"id": "corp-proxy", "match": {"host": "proxy.corp.example.com", "isProxy": true}, "then": {"disposition": "useCredential"}}]
                """
        )
        let session = try await api.session(tenant)
        let path = "/v1/sessions/\(session)/responses"
        var body = example.value
        if example.name == "refused" {
            // A 403 is about the header released to the task: the `digest` example is answered first,
            // and its decision replaces the example's `previousDecisionId`.
            let digest = try #require(Self.examples.first { $0.operationId == "answerRawResponse" && $0.name == "digest" })
            let released = try await api.call(.post, path, key: tenant.clientKey, json: digest.value.description)
            try #require(released.string("disposition") == "useCredential", "\(released)")
            body = body.setting("previousDecisionId", to: .string(try #require(released.string("decisionId"))))
        }
        return Request(path: path, key: tenant.clientKey, body: body) { reply in
            if example.name == "digest" { #expect(reply.authorizationValue?.hasPrefix("Digest ") == true, "\(reply)") }
            if example.name == "refused" { #expect(reply.json["reasonCode"] as? String == "server_refused", "\(reply)") }
        }
    }

    /// The CA that issued the certificates of openapi.yaml's TLS examples (the `serverTrust` chain,
    /// the PKCS#12 and PEM identities, and the `clientCertificate` example's acceptable CA name,
    /// which is its subject). Its key was not kept.
    static let exampleCA = """
        -----BEGIN CERTIFICATE-----
        MIIBPTCB5KADAgECAgEBMAoGCCqGSM49BAMCMBUxEzARBgNVBAMMCkV4YW1wbGUg
        Q0EwIBcNMjYwMTAxMDAwMDAwWhgPMjEyNTEyMzEyMzU5NTlaMBUxEzARBgNVBAMM
        CkV4YW1wbGUgQ0EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQRN6NDzNNdl8bT
        BgXSGIvEMvKP9t86RPf1EGprt4IXXNkXusaPsis/uD33BzLo4O37O7aMhxmfZNni
        nZSjEMWpoyMwITAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwICBDAKBggq
        hkjOPQQDAgNIADBFAiEAu70ftvOuLcvwOrlAvAS7AK+lxrg6aILowNvdxcVten4C
        IE0Ng4aCpOBjBcnUzVrHoLYPeayLLmelfsK5/t5iA+KP
        -----END CERTIFICATE-----

        """
}

// MARK: - Null for what an example leaves out

extension ContractExampleTests {
    /// `body` with `null` for every member it leaves out, at any depth, that `schema` admits as null.
    static func withNulls(_ body: JSONValue, schema: JSONValue) -> JSONValue {
        var body = body
        for path in absentMembers(in: body, schemas: [schema], at: []) {
            let tried = body.setting(path, to: .null)
            if TestAPI.contract.validate(tried, against: schema).isEmpty { body = tried }
        }
        return body
    }

    /// The paths of the members `schemas` declare that `value` (and the objects in it) leave out.
    static func absentMembers(in value: JSONValue, schemas: [JSONValue], at path: [JSONValue.Step]) -> [[JSONValue.Step]] {
        switch value {
        case .object(let members):
            var declared: [String: [JSONValue]] = [:]
            for schema in schemas { declared.merge(memberSchemas(of: schema)) { $0 + $1 } }
            return declared.keys.sorted().flatMap { name in
                members[name].map { absentMembers(in: $0, schemas: declared[name]!, at: path + [.member(name)]) } ?? [path + [.member(name)]]
            }
        case .array(let items):
            let itemSchemas = schemas.flatMap(Self.itemSchemas)
            return items.indices.flatMap { absentMembers(in: items[$0], schemas: itemSchemas, at: path + [.item($0)]) }
        default:
            return []
        }
    }

    /// The schemas of the members `schema` declares (`properties`), through `$ref` and the
    /// applicators; a map's member names (`additionalProperties`) are data, never candidates.
    static func memberSchemas(of schema: JSONValue, depth: Int = 0) -> [String: [JSONValue]] {
        var found: [String: [JSONValue]] = [:]
        for (name, member) in schema["properties"]?.objectValue ?? [:] { found[name, default: []].append(member) }
        for sub in applied(schema, depth: depth) { found.merge(memberSchemas(of: sub, depth: depth + 1)) { $0 + $1 } }
        return found
    }

    static func itemSchemas(of schema: JSONValue) -> [JSONValue] {
        var found = (schema["prefixItems"]?.arrayValue ?? []) + (schema["items"].map { [$0] } ?? [])
        for sub in applied(schema, depth: 0) { found += itemSchemas(of: sub) }
        return found
    }

    /// What `$ref` and the applicators add to `schema`; bounded, for recursive schemas.
    private static func applied(_ schema: JSONValue, depth: Int) -> [JSONValue] {
        guard depth < 8 else { return [] }
        var subschemas = ["allOf", "anyOf", "oneOf"].flatMap { schema[$0]?.arrayValue ?? [] } + ["then", "else"].compactMap { schema[$0] }
        if let ref = schema["$ref"]?.stringValue, let target = TestAPI.contract.document.resolvePointer(ref) { subschemas.append(target) }
        return subschemas
    }
}

extension JSONValue {
    /// A step into a JSON value: an object's member or an array's item.
    enum Step: Sendable {
        case member(String)
        case item(Int)
    }

    /// This object with its member `name` set to `value`.
    func setting(_ name: String, to value: JSONValue) -> JSONValue {
        setting([.member(name)], to: value)
    }

    /// This value with the value at `path` set to `value` (a member is added; an item must exist).
    func setting(_ path: [Step], to value: JSONValue) -> JSONValue {
        guard let step = path.first else { return value }
        switch (self, step) {
        case (.object(var members), .member(let name)):
            members[name] = (members[name] ?? .null).setting(Array(path.dropFirst()), to: value)
            return .object(members)
        case (.array(var items), .item(let index)) where items.indices.contains(index):
            items[index] = items[index].setting(Array(path.dropFirst()), to: value)
            return .array(items)
        default:
            return self
        }
    }
}
