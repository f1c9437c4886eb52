import Foundation
import HTTPTypes
import Testing

/// Every way a request can be wrong gets a 4xx with a stable code, never a 500.
@Suite("Error paths")
struct ErrorTests {
    @Test(arguments: [
        ("{", "malformed_json"),
        ("", "malformed_json"),
        ("[1, 2]", "invalid_field_type"),
        (#"{"name": 42, "role": "client"}"#, "invalid_field_type"),
        (#"{"role": "client"}"#, "missing_field"),
        (#"{"name": null, "role": "client"}"#, "missing_field"),
        (#"{"name": "x", "role": "superuser"}"#, "invalid_enum_value"),
        (#"{"name": "x", "role": "client", "colour": "blue"}"#, "unknown_field"),
        (#"{"name": "", "role": "client"}"#, "invalid_field"),
    ])
    func badBodies(body: String, code: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let reply = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: body)
            #expect(reply.status == 400, "\(reply)")
            #expect(reply.errorCode == code, "\(reply)")
            let message = (reply.json["error"] as? [String: Any])?["message"] as? String
            #expect(message?.isEmpty == false)
        }
    }

    @Test func unknownNestedFieldsAreNamedByPath() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let reply = try await api.call(
                .put, "/v1/policy", key: tenant.adminKey,
                json: #"{"version": 0, "rules": [{"id": "r", "match": {"colour": "x"}, "then": {"disposition": "rejectProtectionSpace"}}]}"#
            )
            #expect(reply.status == 400)
            #expect(reply.errorCode == "unknown_field")
            let message = (reply.json["error"] as? [String: Any])?["message"] as? String
            #expect(message == "'rules[0].match.colour' is not a known field")
        }
    }

    @Test func oversizedBodyIs413() async throws {
        try await TestService.run(configure: { $0.maxBodyBytes = 2048 }) { api in
            let tenant = try await api.tenant()
            let big = #"{"name": "\#(String(repeating: "x", count: 4096))", "role": "client"}"#
            let reply = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: big)
            #expect(reply.status == 413)
            #expect(reply.errorCode == "body_too_large")
        }
    }

    @Test func wrongContentTypeIs415() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let reply = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: "name=x", headers: [.contentType: "application/x-www-form-urlencoded"])
            #expect(reply.status == 415)
            #expect(reply.errorCode == "unsupported_media_type")
            let body = #"{"name": "k", "role": "client"}"#
            for refused in ["application/json; charset=latin1", "text/json", "application/json-seq"] {
                let reply = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: body, headers: [.contentType: refused])
                #expect(reply.errorCode == "unsupported_media_type", "\(refused)")
            }
            for accepted in ["application/json; charset=UTF-8", #"application/json;charset="utf-8""#, "application/merge-patch+json"] {
                let reply = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: body, headers: [.contentType: accepted])
                #expect(reply.status == 201, "\(accepted): \(reply)")
            }
        }
    }

    @Test func badIDsAre400() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            for path in ["/v1/keys/not-a-uuid", "/v1/credentials/123", "/v1/decisions/zzz", "/v1/sessions/%20"] {
                let key = path.hasPrefix("/v1/sessions") ? tenant.clientKey : tenant.adminKey
                let reply = try await api.call(.get, path, key: key)
                #expect(reply.status == 400, "\(path): \(reply)")
                #expect(reply.errorCode == "invalid_id", "\(path)")
            }
            let tenantReply = try await api.call(.get, "/v1/tenants/nope", key: TestService.operatorKey)
            #expect(tenantReply.errorCode == "invalid_id")
        }
    }

    @Test func badQueryParametersAre400() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            for query in [
                "limit=0", "limit=abc", "since=yesterday", "disposition=maybe", "sessionId=x", "cursor=bm90LWEtY3Vyc29y",
                // Less than the microsecond decisions are kept to apart: one time to the database.
                "since=2026-11-27T10:00:00.0000001Z&until=2026-11-27T10:00:00.0000002Z",
            ] {
                let reply = try await api.call(.get, "/v1/decisions?\(query)", key: tenant.adminKey)
                #expect(reply.status == 400, "\(query): \(reply)")
                #expect(reply.errorCode == "invalid_query", "\(query)")
            }
        }
    }

    @Test func unknownRoutesAre404WithCode() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let reply = try await api.call(.get, "/v1/nothing-here", key: tenant.adminKey, checkContract: false)
            #expect(reply.status == 404)
            #expect(reply.errorCode == "route_not_found")
        }
    }

    /// The router skips empty segments: without a check, `POST /v1/keys/` made a key.
    @Test func pathsWithEmptySegmentsAreNoRoutes() async throws {
        try await TestService.run(.live) { api in
            let tenant = try await api.tenant()
            for (method, path) in [(HTTPRequest.Method.get, "/v1/policy/"), (.get, "//v1/policy"), (.get, "/v1//policy"), (.post, "/v1/keys/"), (.get, "/healthz/")] {
                let reply = try await api.call(method, path, key: tenant.adminKey, json: ["name": "k", "role": "client"], checkContract: false)
                #expect(reply.status == 404 && reply.errorCode == "route_not_found", "\(method) \(path): \(reply)")
            }
            let keys = try await api.call(.get, "/v1/keys", key: tenant.adminKey)
            #expect((keys["keys"] as? [[String: Any]])?.contains { $0["name"] as? String == "k" } == false, "\(keys)")
            #expect(try await api.call(.get, "/v1/policy", key: tenant.adminKey).status == 200)
            // Counted as paths no route takes, not as failures of the routes they resemble.
            let metrics = String(decoding: try await api.call(.get, "/metrics").body, as: UTF8.self)
            #expect(!metrics.contains(#"route="/v1/policy",method="GET",status="404""#), "\(metrics)")
            #expect(metrics.contains(#"route="unmatched",method="POST",status="404""#), "\(metrics)")
        }
    }

    @Test func aRouteAskedWithAMethodItDoesNotTakeIs405WithAllow() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = UUID().text
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.delete, "/healthz", "GET, HEAD"),
                (.get, "/v1/sessions/\(id)/challenges", "POST"),
                (.post, "/v1/credentials/\(id)", "DELETE, GET, HEAD, PATCH"),
                (.put, "/v1/counters", "GET, HEAD"),
                (.delete, "/v1/security-checks/states", "GET, HEAD"),
            ]
            for (method, path, allowed) in cases {
                let reply = try await api.call(method, path, key: tenant.adminKey, checkContract: false)
                #expect(reply.status == 405, "\(method) \(path): \(reply)")
                #expect(reply.errorCode == "method_not_allowed", "\(method) \(path)")
                #expect(reply.headers[.allow] == allowed, "\(method) \(path)")
            }
            let unknown = try await api.call(.delete, "/v1/sessions/\(id)/nothing", key: tenant.adminKey, checkContract: false)
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "route_not_found")
        }
    }

    @Test func everyResponseCarriesARequestID() async throws {
        try await TestService.run { api in
            let ok = try await api.call(.get, "/healthz")
            let failed = try await api.call(.get, "/v1/keys")
            #expect(ok.headers[HTTPField.Name("X-Request-Id")!] != nil)
            #expect(failed.headers[HTTPField.Name("X-Request-Id")!] != nil)
        }
    }
}
