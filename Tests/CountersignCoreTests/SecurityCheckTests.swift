import CountersignCore
import Foundation
import Testing

@Suite("Security checks: JSON values")
struct JSONValueTests {
    @Test func decodesAndEncodesMobileFirstChallengesFaithfully() throws {
        let text = #"{"PinCodeAttempts":{"errorMsg":null,"remainingAttempts":2},"StepUp":null,"Other":{"ratio":0.5,"ok":true,"list":[1,"a"]}}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(value["PinCodeAttempts"]?["remainingAttempts"] == .integer(2))
        #expect(value["PinCodeAttempts"]?["errorMsg"] == .null)
        #expect(value["StepUp"] == .null)
        #expect(value["Other"]?["ratio"] == .number(0.5))
        #expect(value["Other"]?["ok"] == .bool(true), "a boolean is not read as a number")
        #expect(value["Other"]?["list"] == [1, "a"])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let again = try JSONDecoder().decode(JSONValue.self, from: try encoder.encode(value))
        #expect(again == value)
        #expect(String(decoding: try encoder.encode(JSONValue.integer(2)), as: UTF8.self) == "2")
    }

    @Test func measuresDepthAndSize() {
        #expect(JSONValue.string("x").depth == 0)
        #expect(JSONValue.object([:]).depth == 1)
        #expect(JSONValue(dictionaryLiteral: ("a", [["b": 1]])).depth == 3)
        let payload: JSONValue = ["remainingAttempts": 2, "errorMsg": nil]
        #expect(payload.approximateSize == #"{"remainingAttempts":2,"errorMsg":null}"#.utf8.count)
    }
}

@Suite("Security checks: challenge lists and templates")
struct SecurityCheckInputCoreTests {
    @Test func challengeListsAreCheckedAsTheServerSendsThem() throws {
        let list = try SecurityCheckChallenges(validating: ["PinCodeAttempts": ["remainingAttempts": 2, "errorMsg": nil], "StepUp": nil])
        #expect(list.names == ["PinCodeAttempts", "StepUp"])
        #expect(SecurityCheckChallenges.remainingAttempts(in: list.challenges["PinCodeAttempts"]!) == 2)
        #expect(SecurityCheckChallenges.remainingAttempts(in: .null) == nil)
        #expect(SecurityCheckChallenges.remainingAttempts(in: ["remainingAttempts": "2"]) == nil)

        #expect(throws: CountersignError(.invalidSecurityChecks, "")) { try SecurityCheckChallenges(validating: ["A": 1]) }
        #expect(throws: CountersignError(.invalidSecurityChecks, "")) { try SecurityCheckChallenges(validating: [1]) }
        #expect(throws: CountersignError(.invalidSecurityCheckName, "")) { try SecurityCheckChallenges(validating: ["a/b": nil]) }
        let many = JSONValue.object(Dictionary(uniqueKeysWithValues: (0...SecurityCheckChallenges.maximumChecks).map { ("C\($0)", JSONValue.null) }))
        #expect(throws: CountersignError(.tooManySecurityChecks, "")) { try SecurityCheckChallenges(validating: many) }
    }

    @Test func failureMessagesAreCutAndCleaned() {
        #expect(SecurityCheckPayload.failureMessage(in: ["failure": "Account blocked"]) == "Account blocked")
        #expect(SecurityCheckPayload.failureMessage(in: ["failure": .string("a\nb")]) == "ab")
        #expect(SecurityCheckPayload.failureMessage(in: ["failure": .string(String(repeating: "x", count: 500))])?.count == 200)
        #expect(SecurityCheckPayload.failureMessage(in: ["reason": "x"]) == nil)
    }

    @Test func templatesReplaceWholeValuesOnly() {
        let template = SecurityCheckAnswerTemplate(["username": "$account", "password": "$secret", "domain": "$domain", "note": "fixed", "n": 3])
        let answer = template.filled(secret: "s3cret", account: "alice", domain: nil)
        #expect(answer == ["username": "alice", "password": "s3cret", "domain": nil, "note": "fixed", "n": 3])
    }

    @Test(arguments: [
        (#"{"pin": "$secret"}"#, true),
        (#"{"user": "$account"}"#, true),
        (#"{"pin": "$domain"}"#, false),
        (#"{"pin": "$secret", "x": "$$"}"#, false),
        (#"{"pin": "${secret}"}"#, false),
        (#"{"pin": " $secret"}"#, false),
        (#"{"a": {"b": {"c": {"d": {"e": "$secret"}}}}}"#, false),
    ])
    func templateValidation(answer: String, valid: Bool) throws {
        let members = try JSONDecoder().decode([String: JSONValue].self, from: Data(answer.utf8))
        let policy = Policy(securityChecks: [
            SecurityCheckHandler(securityCheck: "Check", action: .submitChallengeAnswer, credentialId: "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b", answer: members)
        ])
        if valid {
            try policy.validate { _ in true }
        } else {
            #expect(throws: CountersignError(.invalidPolicy, "")) { try policy.validate { _ in true } }
        }
    }
}

@Suite("Security checks: states and decisions")
struct SecurityCheckEngineTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let limits = SecurityCheckHandler(
        securityCheck: "PinCodeAttempts", action: .submitChallengeAnswer, maxAttempts: 3,
        attemptingStateExpirationSec: 120, successStateExpirationSec: 3600, blockedStateExpirationSec: 60
    ).limits

    @Test func defaultsAreMobileFirstsOwn() {
        let limits = SecurityCheckHandler(securityCheck: "X", action: .submitChallengeAnswer).limits
        #expect(limits.maxAttempts == 1)
        #expect(limits.attemptingStateExpirationSec == 120)
        #expect(limits.successStateExpirationSec == 3600)
        #expect(limits.blockedStateExpirationSec == 0)
        #expect(limits.maxFailures == 1)
        #expect(limits.blockSeconds == 300)
    }

    @Test func statesMoveAsACredentialsValidationSecurityCheck() {
        var state = SecurityCheckState.challenged(nil, at: t0, limits: limits)
        #expect(state.name(at: t0) == .attempting)
        #expect(state.remainingAttempts(at: t0, limits: limits) == 3)
        state = SecurityCheckState.failed(state, at: t0, limits: limits)
        state = SecurityCheckState.failed(state, at: t0 + 1, limits: limits)
        #expect(state.countedAttempts(at: t0 + 1) == 2)
        #expect(state.remainingAttempts(at: t0 + 1, limits: limits) == 1)
        // A challenge keeps the count and restarts the window.
        state = SecurityCheckState.challenged(state, at: t0 + 100, limits: limits)
        #expect(state.attempts == 2)
        #expect(state.expiresAt == t0 + 220)
        state = SecurityCheckState.failed(state, at: t0 + 101, limits: limits)
        #expect(state.name(at: t0 + 101) == .blocked)
        #expect(state.expiresAt == t0 + 161)
        #expect(state.blocks == 1)
        // Blocked stays blocked through challenges and late failures, then expires.
        #expect(SecurityCheckState.challenged(state, at: t0 + 120, limits: limits) == state)
        let late = SecurityCheckState.failed(state, at: t0 + 130, limits: limits)
        #expect(late.expiresAt == state.expiresAt && late.totalFailures == 4)
        // A success reported late, for an answer given before the block, does not lift it.
        #expect(SecurityCheckState.succeeded(state, at: t0 + 140, limits: limits) == state)
        #expect(state.name(at: t0 + 161) == .expired)
        let fresh = SecurityCheckState.challenged(state, at: t0 + 200, limits: limits)
        #expect(fresh.attempts == 0 && fresh.name(at: t0 + 200) == .attempting)
        // Success holds for its time; a lapsed attempting window forgets the attempts.
        let success = SecurityCheckState.succeeded(fresh, at: t0 + 201, limits: limits)
        #expect(success.name(at: t0 + 3800) == .success)
        #expect(success.name(at: t0 + 3801) == .expired)
        let lapsed = SecurityCheckState.failed(SecurityCheckState.failed(nil, at: t0, limits: limits), at: t0 + 121, limits: limits)
        #expect(lapsed.attempts == 1)
    }

    /// An admin lowers `maxAttempts` below the failures a client has: its next challenge blocks
    /// it, for the block's time, as the last failure would have under the new limit. Left
    /// attempting, it got no answer and no block while challenges kept its window open.
    @Test func aLoweredLimitBlocksAtTheNextChallenge() {
        var state = SecurityCheckState.challenged(nil, at: t0, limits: limits)
        state = SecurityCheckState.failed(state, at: t0, limits: limits)
        state = SecurityCheckState.failed(state, at: t0 + 1, limits: limits)
        var lowered = limits
        lowered.maxAttempts = 2
        let next = SecurityCheckState.challenged(state, at: t0 + 10, limits: lowered)
        #expect(next.name(at: t0 + 10) == .blocked)
        #expect(next.expiresAt == t0 + 10 + Double(lowered.blockedStateExpirationSec))
        #expect(next.blocks == 1 && next.attempts == 2)
        #expect(SecurityCheckState.challenged(next, at: t0 + 20, limits: lowered) == next)
    }

    /// Answers given in two sessions of one client: the newer one's success is reported first,
    /// then the older one's failure. The success stands, as a block stands a late success.
    @Test func aLateFailureLeavesASuccessStanding() {
        var single = limits
        single.maxAttempts = 1
        let success = SecurityCheckState.succeeded(SecurityCheckState.challenged(nil, at: t0, limits: single), at: t0 + 1, limits: single)
        let late = SecurityCheckState.failed(success, at: t0 + 2, limits: single)
        #expect(late.name(at: t0 + 2) == .success)
        #expect(late.attempts == 0 && late.blocks == 0 && late.expiresAt == success.expiresAt)
        #expect(late.totalFailures == success.totalFailures + 1)
        // Once the success has lapsed, a failure counts again.
        let lapsed = SecurityCheckState.failed(success, at: success.expiresAt + 1, limits: single)
        #expect(lapsed.name(at: success.expiresAt + 1) == .blocked)
    }

    @Test func aBlockOfNoSecondsIsNoBlock() {
        var unblocking = limits
        unblocking.blockedStateExpirationSec = 0
        var state = SecurityCheckState.challenged(nil, at: t0, limits: unblocking)
        for second in 0..<3 { state = SecurityCheckState.failed(state, at: t0 + Double(second), limits: unblocking) }
        #expect(state.name(at: t0 + 2) == .expired)
        #expect(state.blocks == 0)
        #expect(state.remainingAttempts(at: t0 + 2, limits: unblocking) == 3)
    }

    func credential() -> Credential {
        Credential(
            id: UUID(), tenantID: UUID(), kind: .password,
            attributes: CredentialAttributes(host: "mfp.example.com", account: "pin"),
            domain: nil, label: nil, owner: .tenant(submittedBy: nil), secretVersion: 1, createdAt: t0, updatedAt: t0
        )
    }

    func decide(
        handler: SecurityCheckHandler?,
        challenge: JSONValue = .null,
        state: SecurityCheckState? = nil,
        failures: Int = 0,
        blockedUntil: Date? = nil,
        credential: Credential? = nil
    ) -> SecurityCheckPlan {
        SecurityCheckEngine.decide(
            SecurityCheckInputs(
                name: "PinCodeAttempts", challenge: challenge, handler: handler,
                state: state ?? SecurityCheckState.challenged(nil, at: t0, limits: limits),
                credential: credential ?? self.credential(), credentialFailures: failures, credentialBlockedUntil: blockedUntil, now: t0
            )
        )
    }

    @Test func neverBurnsTheLastAttemptWithACredentialKnownBad() {
        let handler = SecurityCheckHandler(
            securityCheck: "PinCodeAttempts", action: .submitChallengeAnswer, credentialId: UUID().uuidString,
            answer: ["pin": "$secret"], maxAttempts: 3
        )
        #expect(decide(handler: nil).action == .unhandled)
        #expect(decide(handler: SecurityCheckHandler(securityCheck: "PinCodeAttempts", action: .cancel)).action == .cancel)
        #expect(decide(handler: handler).action == .submitChallengeAnswer)
        #expect(decide(handler: handler, challenge: ["remainingAttempts": 2], failures: 1).action == .submitChallengeAnswer)
        let last = decide(handler: handler, challenge: ["remainingAttempts": 1], failures: 1)
        #expect(last.action == .cancel)
        #expect(last.decision.disposition == .cancelAuthenticationChallenge)
        #expect(last.remainingAttempts == 1)
        #expect(decide(handler: handler, challenge: ["remainingAttempts": 1], failures: 0).action == .submitChallengeAnswer, "a credential not known bad may take the last attempt")
        #expect(decide(handler: handler, challenge: ["remainingAttempts": 0]).action == .cancel)
        // The central count speaks too when the server does not say.
        var state = SecurityCheckState.challenged(nil, at: t0, limits: limits)
        state = SecurityCheckState.failed(SecurityCheckState.failed(state, at: t0, limits: limits), at: t0, limits: limits)
        #expect(decide(handler: handler, state: state, failures: 2).action == .cancel)
        let blocked = SecurityCheckState.failed(state, at: t0, limits: limits)
        #expect(decide(handler: handler, state: blocked).decision.blockedUntil == blocked.expiresAt)
        let credentialBlocked = decide(handler: handler, blockedUntil: t0 + 10)
        #expect(credentialBlocked.action == .cancel && credentialBlocked.decision.blockedUntil == t0 + 10)
        let answer = decide(handler: handler)
        #expect(answer.decision.credential != nil && answer.decision.maxFailures == 3 && answer.decision.persistence == Persistence.none)
    }

    /// With the default `maxAttempts` of 1, a window's one attempt is its first, not a last one to
    /// spare: a credential rejected before is answered again once its block has expired. The
    /// server saying that one attempt remains still withholds it.
    @Test func aSingleAttemptWindowIsNotALastAttemptToSpare() {
        let single = SecurityCheckHandler(
            securityCheck: "PinCodeAttempts", action: .submitChallengeAnswer, credentialId: UUID().uuidString, answer: ["pin": "$secret"]
        )
        let fresh = SecurityCheckState.challenged(nil, at: t0, limits: single.limits)
        #expect(decide(handler: single, state: fresh, failures: 1).action == .submitChallengeAnswer)
        #expect(decide(handler: single, challenge: ["remainingAttempts": 1], state: fresh, failures: 1).action == .cancel)
        #expect(decide(handler: single, state: fresh, failures: 1, blockedUntil: t0 + 10).action == .cancel, "its block still holds")
    }
}
