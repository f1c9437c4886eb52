import Foundation
import HTTPTypes
import Testing

/// Every malformed challenge list, report and handler gets a 4xx with a stable code.
@Suite("Security checks: bad input")
struct SecurityCheckInputTests {
    static let longName = String(repeating: "A", count: 101)
    static let manyChecks = "{" + (0..<33).map { #""Check\#($0)": null"# }.joined(separator: ", ") + "}"
    static let bigPayload = #"{"PinCodeAttempts": {"blob": "\#(String(repeating: "x", count: 9000))"}}"#
    static let deepPayload = #"{"PinCodeAttempts": "# + String(repeating: #"{"a": "#, count: 20) + "1" + String(repeating: "}", count: 20) + "}"

    /// Bodies a MobileFirst server would never send, and the code each gets.
    static let malformed: [(body: String, status: Int, code: String)] = [
        ("[]", 400, "invalid_field_type"),
        ("{}", 400, "missing_field"),
        ("{", 400, "malformed_json"),
        (#"{"challenges": null}"#, 400, "invalid_security_checks"),
        (#"{"challenges": []}"#, 400, "invalid_security_checks"),
        (#"{"challenges": "PinCodeAttempts"}"#, 400, "invalid_security_checks"),
        (#"{"challenges": {}}"#, 400, "invalid_security_checks"),
        (#"{"challenges": {"PinCodeAttempts": 3}}"#, 400, "invalid_security_checks"),
        (#"{"challenges": {"PinCodeAttempts": "pin please"}}"#, 400, "invalid_security_checks"),
        (#"{"challenges": {"PinCodeAttempts": [1, 2]}}"#, 400, "invalid_security_checks"),
        (#"{"challenges": {"PinCodeAttempts": true}}"#, 400, "invalid_security_checks"),
        // A number no JSON reader keeps: said so, not that it must be an object.
        (#"{"challenges": {"PinCodeAttempts": {"remainingAttempts": 1e400}}}"#, 400, "invalid_field"),
        (#"{"challenges": \#(manyChecks)}"#, 400, "too_many_security_checks"),
        (#"{"challenges": {"\#(longName)": null}}"#, 400, "invalid_security_check_name"),
        (#"{"challenges": {"Pin Code": null}}"#, 400, "invalid_security_check_name"),
        (#"{"challenges": {"": null}}"#, 400, "invalid_security_check_name"),
        // Report URLs name the check as a path segment, which clients fold away when it is . or ..
        (#"{"challenges": {".": null}}"#, 400, "invalid_security_check_name"),
        (#"{"challenges": {"..": null}}"#, 400, "invalid_security_check_name"),
        (#"{"challenges": \#(bigPayload)}"#, 413, "security_check_payload_too_large"),
        (#"{"challenges": \#(deepPayload)}"#, 413, "security_check_payload_too_large"),
        (#"{"challenges": {"PinCodeAttempts": null}, "taskId": "t-1"}"#, 400, "unknown_field"),
    ]

    @Test func malformedChallengeListsGet4xxWithACode() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            for (body, status, code) in Self.malformed {
                let reply = try await api.call(.post, "/v1/sessions/\(session)/security-checks", key: tenant.clientKey, json: body)
                #expect(reply.status == status, "\(body.prefix(80)): \(reply)")
                #expect(reply.errorCode == code, "\(body.prefix(80)): \(reply)")
            }
            // Nothing was recorded for any of them.
            let decisions = try await api.call(.get, "/v1/decisions?sessionId=\(session)", key: tenant.adminKey)
            #expect((decisions.json["decisions"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func oversizedBodiesAre413() async throws {
        try await TestService.run(configure: { $0.maxBodyBytes = 4096 }) { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let reply = try await api.securityChecks(tenant, session: session, Self.bigPayload)
            #expect(reply.status == 413)
            #expect(reply.errorCode == "body_too_large")
        }
    }

    /// A handler for a check no report could name is refused when the policy is saved.
    @Test(arguments: [".", ".."]) func handlersForChecksNamedLikeAPathStepAreRefused(name: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let reply = try await api.putSecurityCheckHandlers(tenant, #"[{"securityCheck": "\#(name)", "action": "cancel"}]"#)
            #expect(reply.status == 400, "\(reply)")
            #expect(reply.errorCode == "invalid_policy", "\(reply)")
        }
    }

    @Test func malformedReports() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "1234")
            try await api.securityCheckHandlers(
                tenant,
                #"[{"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "credentialId": "\#(credential)", "answer": {"pin": "$secret"}}]"#
            )
            let session = try await api.session(tenant)
            let unanswered = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            #expect(unanswered.status == 404)
            #expect(unanswered.errorCode == "security_check_not_answered")

            let answered = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null, "StepUp": null}"#)
            let stepUpDecision = try #require(answered.answer("StepUp")?["decisionId"] as? String)
            let notAnAnswer = try await api.reportSecurityCheck(tenant, session: session, check: "StepUp", "failure")
            #expect(notAnAnswer.errorCode == "security_check_not_answered", "an unhandled check has no answer to reject")
            let wrongDecision = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure", decisionId: stepUpDecision)
            #expect(wrongDecision.errorCode == "security_check_not_answered", "\(wrongDecision)")

            for (payload, code) in [("[]", "invalid_security_checks"), (#""Account blocked""#, "invalid_security_checks"), ("null", "invalid_security_checks"), ("{", "malformed_json")] {
                let reply = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure", payload: payload)
                #expect(reply.status == 400, "\(payload): \(reply)")
                #expect(reply.errorCode == code, "\(payload): \(reply)")
            }
            let big = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "success", payload: #"{"x": "\#(String(repeating: "y", count: 9000))"}"#)
            #expect(big.status == 413)
            #expect(big.errorCode == "security_check_payload_too_large")
            let badName = try await api.reportSecurityCheck(tenant, session: session, check: Self.longName, "failure")
            #expect(badName.errorCode == "invalid_security_check_name")
            for decisionId in ["nope", ""] {
                let badQuery = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure", decisionId: decisionId)
                #expect(badQuery.errorCode == "invalid_query", "'\(decisionId)': \(badQuery)")
            }
            let noSession = try await api.reportSecurityCheck(tenant, session: UUID().uuidString, check: "PinCodeAttempts", "failure")
            #expect(noSession.status == 404)
            #expect(noSession.errorCode == "not_found")

            // Another tenant sees neither the session nor its answers.
            let other = try await api.tenant()
            let foreign = try await api.reportSecurityCheck(other, session: session, check: "PinCodeAttempts", "failure")
            #expect(foreign.errorCode == "not_found")
            let foreignList = try await api.securityChecks(other, session: session, #"{"PinCodeAttempts": null}"#)
            #expect(foreignList.errorCode == "not_found")

            // The admin listing checks its filters; an empty one is refused, not read as no filter.
            for query in ["securityCheck=Pin%20Code", "limit=0", "clientId=", "securityCheck="] {
                let reply = try await api.call(.get, "/v1/security-checks/states?\(query)", key: tenant.adminKey)
                #expect(reply.status == 400 && reply.errorCode == "invalid_query", "\(query): \(reply)")
            }
            let asClient = try await api.call(.get, "/v1/security-checks/states", key: tenant.clientKey)
            #expect(asClient.errorCode == "insufficient_role")
            let asAdmin = try await api.call(.post, "/v1/sessions/\(session)/security-checks", key: tenant.adminKey, json: #"{"challenges": {"A": null}}"#)
            #expect(asAdmin.errorCode == "insufficient_role")
        }
    }

    @Test func anInvalidatedSessionAnswersNoSecurityCheck() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            _ = try await api.call(.post, "/v1/sessions/\(session)/invalidate", key: tenant.clientKey, json: ["mode": "finishTasks"])
            let reply = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#)
            #expect(reply.status == 409)
            #expect(reply.errorCode == "session_invalidated")
        }
    }
}
