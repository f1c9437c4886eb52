import Foundation
import HTTPTypes
import Testing

/// Handlers are part of the policy: validated when it is saved, versioned with it, and they
/// shape the answers (templates, cancel, several checks at once).
@Suite("Security checks: handlers in the policy")
struct SecurityCheckHandlerTests {
    @Test func handlersAreValidatedWhenThePolicyIsSaved() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "1234")
            func submit(_ extra: String, answer: String = #"{"pin": "$secret"}"#, name: String = "PinCodeAttempts") -> String {
                #"{"securityCheck": "\#(name)", "action": "submitChallengeAnswer", "credentialId": "\#(credential)", "answer": \#(answer)\#(extra)}"#
            }
            let cases: [(handlers: String, code: String)] = [
                ("[\(submit(#", "colour": "blue""#))]", "unknown_field"),
                ("[\(submit(""))", "malformed_json"),
                ("[\(submit("")), \(submit(""))]", "invalid_policy"),
                ("[\(submit("", name: "Pin Code"))]", "invalid_policy"),
                (#"[{"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "credentialId": "\#(UUID().uuidString)", "answer": {"pin": "$secret"}}]"#, "unknown_credential_reference"),
                (#"[{"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "answer": {"pin": "$secret"}}]"#, "invalid_policy"),
                (#"[{"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "credentialId": "\#(credential)"}]"#, "invalid_policy"),
                (#"[{"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "credentialId": "not-a-uuid", "answer": {"pin": "$secret"}}]"#, "invalid_policy"),
                ("[\(submit("", answer: #"{"pin": "$secrets"}"#))]", "invalid_policy"),
                ("[\(submit("", answer: #"{"pin": "pin-$secret"}"#))]", "invalid_policy"),
                ("[\(submit("", answer: #"{"pin": "1234"}"#))]", "invalid_policy"),
                ("[\(submit("", answer: "{}"))]", "invalid_policy"),
                ("[\(submit("", answer: #""$secret""#))]", "invalid_field_type"),
                ("[\(submit(#", "persistence": "permanent""#))]", "invalid_policy"),
                ("[\(submit(#", "maxAttempts": 0"#))]", "invalid_field"),
                ("[\(submit(#", "blockedStateExpirationSec": -1"#))]", "invalid_field"),
                ("[\(submit(#", "successStateExpirationSec": 0"#))]", "invalid_field"),
                (#"[{"securityCheck": "StepUp", "action": "cancel", "credentialId": "\#(credential)"}]"#, "invalid_policy"),
                (#"[{"securityCheck": "StepUp", "action": "ignore"}]"#, "invalid_enum_value"),
                (#"[{"action": "cancel"}]"#, "missing_field"),
            ]
            for (handlers, code) in cases {
                let reply = try await api.putSecurityCheckHandlers(tenant, handlers)
                #expect(reply.status == 400, "\(handlers): \(reply)")
                #expect(reply.errorCode == code, "\(handlers): \(reply)")
            }
            #expect(try await api.call(.get, "/v1/policy", key: tenant.adminKey).json["version"] as? Int == 0, "nothing was saved")

            // A good one is saved, versioned, read back as written; its credential cannot be deleted.
            let saved = try await api.securityCheckHandlers(tenant, "[\(submit(#", "maxAttempts": 3, "persistence": "forSession""#))]")
            #expect(saved.json["version"] as? Int == 1)
            let handlers = try #require(saved.json["securityChecks"] as? [[String: Any]])
            #expect(handlers.first?["securityCheck"] as? String == "PinCodeAttempts")
            #expect(handlers.first?["answer"] as? [String: String] == ["pin": "$secret"])
            let version = try await api.call(.get, "/v1/policy/versions/1", key: tenant.adminKey)
            #expect((version.json["securityChecks"] as? [Any])?.count == 1)
            let delete = try await api.call(.delete, "/v1/credentials/\(credential)", key: tenant.adminKey)
            #expect(delete.status == 409)
            #expect(delete.errorCode == "credential_in_use")
        }
    }

    @Test func templatesCancelAndSeveralChecksInOneList() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let login = try await api.credential(tenant, host: "mfp.example.com", account: "alice", password: "correct horse", extra: ["domain": "CORP"])
            let pin = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "1234")
            try await api.securityCheckHandlers(
                tenant,
                #"""
                [{"securityCheck": "UserLogin", "action": "submitChallengeAnswer", "credentialId": "\#(login)",
                  "answer": {"username": "$account", "password": "$secret", "domain": "$domain", "rememberMe": false,
                             "device": {"pin": "$secret", "tags": ["$account", "fixed"]}}, "persistence": "forSession"},
                 {"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "credentialId": "\#(pin)", "answer": {"pin": "$secret"}},
                 {"securityCheck": "StepUp", "action": "cancel"}]
                """#
            )
            let session = try await api.session(tenant)
            let reply = try await api.securityChecks(
                tenant, session: session,
                #"{"UserLogin": {"errorMsg": null}, "PinCodeAttempts": {"remainingAttempts": 3}, "StepUp": {"level": 2}, "Unknown": null}"#
            )
            #expect(reply.status == 200, "\(reply)")
            let userLogin = try #require(reply.answer("UserLogin"))
            #expect(userLogin["action"] as? String == "submitChallengeAnswer")
            #expect(userLogin["persistence"] as? String == "forSession")
            let answer = try #require(userLogin["answer"] as? [String: Any])
            #expect(answer["username"] as? String == "alice")
            #expect(answer["password"] as? String == "correct horse")
            #expect(answer["domain"] as? String == "CORP")
            #expect(answer["rememberMe"] as? Bool == false)
            let device = try #require(answer["device"] as? [String: Any])
            #expect(device["pin"] as? String == "correct horse")
            #expect(device["tags"] as? [String] == ["alice", "fixed"])
            #expect(reply.answer("PinCodeAttempts")?["answer"] as? [String: String] == ["pin": "1234"])
            let stepUp = try #require(reply.answer("StepUp"))
            #expect(stepUp["action"] as? String == "cancel")
            #expect(stepUp["answer"] is NSNull)
            #expect(reply.answer("Unknown")?["action"] as? String == "unhandled")

            // Four checks, four decisions, each recorded as a securityCheck decision; no secret in them.
            let ids = ["UserLogin", "PinCodeAttempts", "StepUp", "Unknown"].compactMap { reply.answer($0)?["decisionId"] as? String }
            #expect(Set(ids).count == 4)
            for id in ids {
                let record = try await api.call(.get, "/v1/decisions/\(id)", key: tenant.adminKey)
                #expect(record.status == 200, "\(record)")
                #expect(record.json["kind"] as? String == "securityCheck")
                #expect(!String(decoding: record.body, as: UTF8.self).contains("correct horse"))
            }
            let userLoginRecord = try await api.call(.get, "/v1/decisions/\(ids[0])", key: tenant.adminKey)
            #expect(userLoginRecord.json["credentialId"] as? String == login)
            #expect(userLoginRecord.json["taskId"] as? String == "UserLogin")
            #expect((userLoginRecord.json["rule"] as? [String: Any])?["id"] as? String == "UserLogin")

            // A report may name the answer it is about; the other answers keep no outcome.
            let success = try await api.reportSecurityCheck(tenant, session: session, check: "UserLogin", "success", decisionId: ids[0])
            #expect(success.json["applied"] as? Bool == true, "\(success)")
            #expect((success.json["decision"] as? [String: Any])?["id"] as? String == ids[0])
            #expect(success.securityCheckState?["state"] as? String == "success")
            let otherRecord = try await api.call(.get, "/v1/decisions/\(ids[1])", key: tenant.adminKey)
            #expect(otherRecord.json["outcome"] is NSNull)

            // Only checks with a handler that answers are counted per client.
            let states = try await api.securityCheckStates(tenant, clientId: "device-1")
            #expect(Set(states.compactMap { $0["securityCheck"] as? String }) == ["UserLogin", "PinCodeAttempts"])
        }
    }
}
