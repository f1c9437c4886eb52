@testable import CountersignClient
import Foundation
import Testing

/// The security-check operations: MobileFirst-style challenge lists, failure and success reports.
@Suite("Security checks through the API client", .urlSessionSlot)
struct SecurityCheckTests {
    @Test("the PIN story against a real Countersign: answered, refused, counted once, then accepted")
    func pinStory() async throws {
        try await LiveCountersign.run { service in
            let tenant = try await service.admin.tenant()
            let credential = try await service.admin.credential(tenant, json: #"{"host": "mfp.example.com", "account": "pin", "password": "0000"}"#)
            try await service.admin.policy(
                tenant,
                rules: "[]",
                securityChecks: """
                    [{"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "credentialId": "\(credential)",
                      "answer": {"pin": "$secret"}, "maxAttempts": 3, "blockedStateExpirationSec": 60}]
                    """
            )
            let client = CountersignClient(baseURL: service.baseURL, key: ClientKey(tenant.clientKey))
            let session = try await client.openSession(OpenSessionRequest(clientId: "ios-7F3A"))

            let first = try await client.answerSecurityChecks(
                SecurityCheckChallengeList(challenges: ["PinCodeAttempts": ["remainingAttempts": 3, "errorMsg": nil], "StepUp": nil]),
                in: session.id
            )
            let pin = try #require(first.answers["PinCodeAttempts"])
            #expect(pin.action == .submitChallengeAnswer)
            #expect(pin.answer == ["pin": "0000"])
            #expect(pin.state == .attempting)
            #expect(pin.remainingAttempts == 3)
            #expect(first.answers["StepUp"]?.action == .unhandled)
            #expect(first.answers["StepUp"]?.answer == nil)
            #expect(!"\(pin)".contains(#""0000""#), "as a string: its decision id may hold the digits 0000 by chance")

            let failure = try await client.reportSecurityCheckFailure(
                "PinCodeAttempts", payload: ["failure": "Pin code is not valid."], decisionId: pin.decisionId, in: session.id
            )
            #expect(failure.applied)
            #expect(failure.decision.id == pin.decisionId)
            #expect(failure.decision.outcome == .rejected)
            #expect(failure.decision.kind == "securityCheck")
            #expect(failure.counter?.failures == 1)
            #expect(failure.state?.attempts == 1)
            #expect(failure.state?.remainingAttempts == 2)
            let repeated = try await client.reportSecurityCheckFailure("PinCodeAttempts", payload: ["failure": "Pin code is not valid."], decisionId: pin.decisionId, in: session.id)
            #expect(!repeated.applied)

            let second = try await client.answerSecurityChecks(
                SecurityCheckChallengeList(challenges: ["PinCodeAttempts": ["remainingAttempts": 2, "errorMsg": "Pin code is not valid."]]),
                in: session.id
            )
            let again = try #require(second.answers["PinCodeAttempts"])
            #expect(again.action == .submitChallengeAnswer)
            let success = try await client.reportSecurityCheckSuccess("PinCodeAttempts", in: session.id)
            #expect(success.applied)
            #expect(success.decision.id == again.decisionId)
            #expect(success.decision.outcome == .accepted)
            #expect(success.state?.state == .success)

            do throws(CountersignClientError) {
                _ = try await client.reportSecurityCheckFailure("NeverAsked", in: session.id)
                Issue.record("a report for a check never answered")
            } catch {
                #expect(error.serviceCode == "security_check_not_answered")
            }
            do throws(CountersignClientError) {
                _ = try await client.answerSecurityChecks(SecurityCheckChallengeList(challenges: ["PinCodeAttempts": "not an object"]), in: session.id)
                Issue.record("a malformed list was answered")
            } catch {
                #expect(error.status == 400)
                #expect(error.serviceCode == "invalid_security_checks")
            }
        }
    }

    @Test("a report naming its decision is idempotent and retried; one naming none is not")
    func reportRetries() async throws {
        let script = FakeCountersign.Script(securityCheckReport: { _ in .json(502, "bad gateway") })
        try await FakeCountersign.run(script) { fake in
            let client = APIClientTests.client(fake)
            let decision = UUID()
            _ = try? await client.reportSecurityCheckFailure("PinCodeAttempts", payload: ["failure": "no"], decisionId: decision, in: UUID())
            #expect(fake.recorder.count("securityCheckReport") == 3)
            let named = try #require(fake.recorder.all.last)
            #expect(named.path.hasSuffix("/security-checks/PinCodeAttempts/failure"))
            #expect(named.query == "decisionId=\(decision.uuidString.lowercased())")
            #expect(named.body == #"{"failure":"no"}"#)

            _ = try? await client.reportSecurityCheckSuccess("PinCodeAttempts", in: UUID())
            #expect(fake.recorder.count("securityCheckReport") == 4)
            let unnamed = try #require(fake.recorder.all.last)
            #expect(unnamed.path.hasSuffix("/security-checks/PinCodeAttempts/success"))
            #expect(unnamed.query == nil || unnamed.query == "")
            #expect(unnamed.body == "{}")
        }
    }

    @Test("names the contract refuses never leave the client")
    func badNames() async throws {
        let client = CountersignClient(baseURL: URL(string: "http://127.0.0.1:1")!, key: ClientKey("k"))
        for name in ["..", ".", "", "Pin Code", "a/b", String(repeating: "x", count: 101)] {
            do throws(CountersignClientError) {
                _ = try await client.reportSecurityCheckSuccess(name, in: UUID())
                Issue.record("'\(name)' was sent")
            } catch {
                guard case .invalidRequest = error else {
                    Issue.record("'\(name)': \(error)")
                    continue
                }
            }
        }
    }

    @Test("an answer never shows its secret")
    func answerRedacted() {
        let answer = SecurityCheckAnswer(action: .submitChallengeAnswer, answer: ["pin": "4321"], decisionId: UUID(), reason: "r")
        var dumped = ""
        dump(answer, to: &dumped)
        for text in ["\(answer)", String(reflecting: answer), dumped, "\(SecurityCheckAnswers(answers: ["P": answer]))"] {
            #expect(!text.contains("4321"), "\(text)")
        }
    }

    @Test("JSON values round-trip as they came")
    func jsonValues() throws {
        let text = #"{"a":null,"b":true,"c":3,"d":2.5,"e":"x","f":[1,"y",{"g":false}]}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(value == ["a": nil, "b": true, "c": 3, "d": 2.5, "e": "x", "f": [1, "y", ["g": false]]])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == text)
    }
}
