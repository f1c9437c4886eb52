import Foundation
import HTTPTypes
import Testing

/// The PinCodeAttempts story, end to end against the running service: the stored PIN is wrong,
/// the failures drive the count, the client is told to cancel before the last attempt is
/// burned, an admin updates the PIN, the next challenge is answered and the success recorded.
@Suite("Security checks: the PinCodeAttempts story")
struct PinCodeStoryTests {
    @Test func wrongPinIsNeverBurnedOnTheLastAttemptAndTheUpdatedPinSucceeds() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            try await api.securityCheckHandlers(
                tenant,
                #"""
                [{"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "credentialId": "\#(credential)",
                  "answer": {"pin": "$secret"}, "maxAttempts": 3, "attemptingStateExpirationSec": 120,
                  "successStateExpirationSec": 3600, "blockedStateExpirationSec": 60}]
                """#
            )
            let session = try await api.session(tenant, clientId: "ios-7F3A")
            var server = PinCodeServer(pin: "1234", maxAttempts: 3)

            // 1. The server guards the balance with PinCodeAttempts (and a StepUp check nobody handles).
            let first = try await api.securityChecks(
                tenant, session: session,
                #"{"PinCodeAttempts": {"remainingAttempts": 3, "errorMsg": null}, "StepUp": null}"#
            )
            #expect(first.status == 200, "\(first)")
            let pinAnswer = try #require(first.answer("PinCodeAttempts"))
            #expect(pinAnswer["action"] as? String == "submitChallengeAnswer")
            #expect(pinAnswer["answer"] as? [String: String] == ["pin": "0000"])
            #expect(pinAnswer["state"] as? String == "attempting")
            #expect(pinAnswer["remainingAttempts"] as? Int == 3)
            let stepUp = try #require(first.answer("StepUp"))
            #expect(stepUp["action"] as? String == "unhandled")
            #expect(stepUp["answer"] is NSNull)
            let firstDecision = try #require(pinAnswer["decisionId"] as? String)
            #expect(firstDecision != stepUp["decisionId"] as? String)

            // 2. The wrong PIN is refused; the client reports the failure, twice (a retried call).
            #expect(server.submit(try #require(pinAnswer["answer"] as? [String: Any])) == .challengedAgain)
            let failure = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure", payload: #"{"failure": "Pin code is not valid."}"#)
            #expect(failure.status == 200, "\(failure)")
            #expect(failure.json["applied"] as? Bool == true)
            #expect((failure.json["decision"] as? [String: Any])?["id"] as? String == firstDecision)
            #expect((failure.json["decision"] as? [String: Any])?["outcome"] as? String == "rejected")
            #expect((failure.json["counter"] as? [String: Any])?["failures"] as? Int == 1)
            #expect(failure.securityCheckState?["attempts"] as? Int == 1)
            #expect(failure.securityCheckState?["remainingAttempts"] as? Int == 2)
            let repeated = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure", payload: #"{"failure": "Pin code is not valid."}"#)
            #expect(repeated.status == 200, "\(repeated)")
            #expect(repeated.json["applied"] as? Bool == false)
            #expect(repeated.securityCheckState?["attempts"] as? Int == 1, "the same report twice counts once")

            // 3. Two attempts remain: the stored PIN may be tried again (it is not the last attempt).
            let second = try await api.securityChecks(tenant, session: session, server.challenge)
            let secondAnswer = try #require(second.answer("PinCodeAttempts"))
            #expect(secondAnswer["action"] as? String == "submitChallengeAnswer", "\(second)")
            #expect(secondAnswer["remainingAttempts"] as? Int == 2)
            #expect(server.submit(try #require(secondAnswer["answer"] as? [String: Any])) == .challengedAgain)
            let secondFailure = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure", payload: #"{"failure": "Pin code is not valid."}"#)
            #expect(secondFailure.json["applied"] as? Bool == true)
            #expect(secondFailure.securityCheckState?["attempts"] as? Int == 2)

            // 4. One attempt remains and the stored PIN is known bad: cancel, do not burn it.
            let third = try await api.securityChecks(tenant, session: session, server.challenge)
            let thirdAnswer = try #require(third.answer("PinCodeAttempts"))
            #expect(thirdAnswer["action"] as? String == "cancel", "\(third)")
            #expect(thirdAnswer["answer"] is NSNull)
            #expect((thirdAnswer["reason"] as? String)?.contains("last attempt is not burned") == true)
            #expect(thirdAnswer["remainingAttempts"] as? Int == 1)
            #expect(server.remainingAttempts == 1, "the server still has the last attempt")
            #expect(server.submissions == ["0000", "0000"])

            // The admin sees where the client stands; nothing shows the PIN.
            let states = try await api.call(.get, "/v1/security-checks/states?clientId=ios-7F3A", key: tenant.adminKey)
            // As a JSON string: random ids may hold the digits 0000 by chance.
            #expect(!String(decoding: states.body, as: UTF8.self).contains(#""0000""#))
            let state = try #require((states.json["states"] as? [[String: Any]])?.first)
            #expect(state["securityCheck"] as? String == "PinCodeAttempts")
            #expect(state["state"] as? String == "attempting")
            #expect(state["attempts"] as? Int == 2)
            #expect(state["remainingAttempts"] as? Int == 1)
            #expect(state["totalFailures"] as? Int == 2)
            #expect(state["lastFailure"] as? String == "Pin code is not valid.")

            // 5. The admin updates the PIN; the next challenge is answered with it, and succeeds.
            let patched = try await api.call(.patch, "/v1/credentials/\(credential)", key: tenant.adminKey, json: ["password": "1234"])
            #expect(patched.status == 200, "\(patched)")
            let fourth = try await api.securityChecks(tenant, session: session, server.challenge)
            let fourthAnswer = try #require(fourth.answer("PinCodeAttempts"))
            #expect(fourthAnswer["action"] as? String == "submitChallengeAnswer", "\(fourth)")
            #expect(fourthAnswer["answer"] as? [String: String] == ["pin": "1234"])
            let lastDecision = try #require(fourthAnswer["decisionId"] as? String)
            #expect(server.submit(try #require(fourthAnswer["answer"] as? [String: Any])) == .success)

            let success = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "success")
            #expect(success.status == 200, "\(success)")
            #expect(success.json["applied"] as? Bool == true)
            #expect((success.json["decision"] as? [String: Any])?["id"] as? String == lastDecision)
            #expect((success.json["decision"] as? [String: Any])?["outcome"] as? String == "accepted")
            #expect(success.securityCheckState?["state"] as? String == "success")
            #expect(success.securityCheckState?["attempts"] as? Int == 0)
            let again = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "success")
            #expect(again.json["applied"] as? Bool == false)
            let contradiction = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure", payload: #"{"failure": "x"}"#)
            #expect(contradiction.status == 409)
            #expect(contradiction.errorCode == "outcome_conflict")

            // The audit: every check of every list is a securityCheck decision, the cancel included.
            let decisions = try await api.call(.get, "/v1/decisions?sessionId=\(session)", key: tenant.adminKey)
            let records = try #require(decisions.json["decisions"] as? [[String: Any]])
            #expect(records.count == 5)
            #expect(records.allSatisfy { $0["kind"] as? String == "securityCheck" })
            #expect(records.map { $0["disposition"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") } == [
                "cancelAuthenticationChallenge", "performDefaultHandling", "useCredential", "useCredential", "useCredential",
            ])
            #expect(records.compactMap { $0["outcome"] as? String }.sorted() == ["accepted", "rejected", "rejected"])
            let space = try #require(records.first?["protectionSpace"] as? [String: Any])
            #expect(space["host"] as? String == "securitycheck.local")

            // The credential's own counter for the check: two rejections, reset by the PIN change and the success.
            let counters = try await api.call(.get, "/v1/counters?credentialId=\(credential)", key: tenant.adminKey)
            let counter = try #require((counters.json["counters"] as? [[String: Any]])?.first)
            #expect(counter["totalRejections"] as? Int == 2)
            #expect(counter["failures"] as? Int == 0)
            #expect((counter["protectionSpace"] as? String)?.contains("PinCodeAttempts") == true)
            #expect((counter["clients"] as? [[String: Any]])?.first?["clientId"] as? String == "ios-7F3A")
        }
    }
}
