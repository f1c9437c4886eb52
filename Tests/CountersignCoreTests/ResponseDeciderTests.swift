import CountersignCore
import Foundation
import Testing

@Suite("Raw response decisions")
struct ResponseDeciderTests {
    let credential = Credential(
        id: UUID(),
        tenantID: UUID(),
        kind: .password,
        attributes: CredentialAttributes(host: "h.example", account: "svc"),
        domain: nil,
        label: nil,
        owner: .tenant(submittedBy: nil),
        secretVersion: 1,
        createdAt: Date(),
        updatedAt: Date()
    )

    func context(_ fields: [String], status: Int = 401) throws -> RawResponseContext {
        try RawResponse(
            taskId: "t",
            status: status,
            headers: fields.map { [status == 407 ? "Proxy-Authenticate" : "WWW-Authenticate", $0] },
            request: ForwardedRequest(method: "GET", url: "https://h.example/x"),
            proxy: status == 407 ? ForwardedProxy(host: "proxy.example", port: 3128) : nil
        ).validated()
    }

    /// The engine's stand-in: releases for the methods in `releasing`, blocks those in `blocked`,
    /// and has no rule for the rest.
    func engine(releasing: Set<AuthenticationMethod>, blocked: Set<AuthenticationMethod> = []) -> (ProtectionSpace) -> DecisionPlan {
        { [credential] space in
            if releasing.contains(space.method) {
                return DecisionPlan(disposition: .useCredential, credential: credential, scope: .task, source: .policy, reason: "released")
            }
            if blocked.contains(space.method) {
                return DecisionPlan(
                    disposition: .rejectProtectionSpace, scope: .task, rule: RuleReference(id: "r", name: nil), source: .policy,
                    reason: "blocked", blockedUntil: Date().addingTimeInterval(60)
                )
            }
            return DecisionPlan(disposition: .performDefaultHandling, scope: .task, source: .noMatchingRule, reason: "no rule")
        }
    }

    @Test func answersTheStrongestChallengeACredentialIsReleasedFor() throws {
        let decide = engine(releasing: [.httpBasic, .httpDigest])
        let plan = try ResponseDecider.plan(
            context([#"Basic realm="b""#, #"Digest realm="d", nonce="n", qop=auth, algorithm=SHA-256"#, "Negotiate"]),
            policy: .empty,
            decide: decide
        )
        #expect(plan.chosen?.index == 1)
        #expect(plan.space.method == .httpDigest && plan.space.realm == "d" && plan.space.host == "h.example")
        #expect(plan.plan.disposition == .useCredential)
        #expect(plan.reasonCode == .authorization)
        #expect(plan.selection.assessments.map(\.status) == [.lowerPreference, .chosen, .unsupportedScheme])
    }

    @Test func theTenantsPreferenceOrderDecides() throws {
        let decide = engine(releasing: [.httpBasic, .httpDigest])
        let policy = Policy(settings: PolicySettings(preferredSchemes: [.basic, .digest(.md5)]))
        let plan = try ResponseDecider.plan(
            context([#"Digest realm="d", nonce="n", qop=auth, algorithm=SHA-256"#, #"Digest realm="d", nonce="n", qop=auth"#, #"Basic realm="b""#]),
            policy: policy,
            decide: decide
        )
        #expect(plan.chosen?.index == 2)
        #expect(plan.selection.assessments.map(\.status) == [.unsupportedAlgorithm, .lowerPreference, .chosen])
    }

    /// A response whose strongest challenge offers only auth-int is answered with another when
    /// the request's body did not come with it, and with that one when it did.
    @Test func anAuthIntOnlyChallengeIsAnsweredWhenTheBodyCame() throws {
        let decide = engine(releasing: [.httpDigest])
        let fields = [#"Digest realm="d", nonce="a", qop="auth-int", algorithm=SHA-256"#, #"Digest realm="d", nonce="b", qop=auth"#]
        #expect(try ResponseDecider.plan(context(fields), policy: .empty, decide: decide).chosen?.index == 1)
        var withBody = try context(fields)
        withBody.entityBody = .bytes([])
        #expect(try ResponseDecider.plan(withBody, policy: .empty, decide: decide).chosen?.index == 0)
    }

    /// A hash the crypto library lacks (MD5 under a FIPS-only OpenSSL) is as if the tenant did not
    /// prefer it: another challenge is answered, never one the process cannot compute.
    @Test func aMechanismThisProcessCannotComputeIsPassedOver() throws {
        let decide = engine(releasing: [.httpBasic, .httpDigest])
        let plan = try ResponseDecider.plan(
            context([#"Digest realm="d", nonce="n", qop=auth"#, #"Basic realm="b""#]),
            policy: .empty,
            canAnswer: { $0 != .digest(.md5) },
            decide: decide
        )
        #expect(plan.chosen?.index == 1)
        #expect(plan.selection.assessments.map(\.status) == [.unsupportedAlgorithm, .chosen])
    }

    @Test func aBlockedCredentialAnswersWithItsRulesDisposition() throws {
        let decide = engine(releasing: [], blocked: [.httpDigest])
        let plan = try ResponseDecider.plan(context([#"Basic realm="b""#, #"Digest realm="d", nonce="n", qop=auth"#]), policy: .empty, decide: decide)
        #expect(plan.chosen == nil)
        #expect(plan.space.method == .httpDigest)
        #expect(plan.plan.disposition == .rejectProtectionSpace)
        #expect(plan.reasonCode == .credentialBlocked)
        #expect(plan.selection.assessments.map(\.status) == [.noCredential, .noCredential])
    }

    @Test func withoutARuleTheMostPreferredChallengeSpeaks() throws {
        let decide = engine(releasing: [])
        let plan = try ResponseDecider.plan(context([#"Basic realm="b""#, #"Digest realm="d", nonce="n", qop=auth"#]), policy: .empty, decide: decide)
        #expect(plan.space.method == .httpDigest)
        #expect(plan.plan.disposition == .performDefaultHandling)
        #expect(plan.reasonCode == .noMatchingRule)
    }

    @Test func aRuleThatFindsNoCredentialSaysSo() throws {
        let policy = Policy(rules: [PolicyRule(id: "files", match: RuleMatch(), then: RuleAction(disposition: .useCredential))])
        let plan = try ResponseDecider.plan(context([#"Basic realm="b""#]), policy: policy) { _ in
            DecisionPlan(
                disposition: .cancelAuthenticationChallenge, scope: .task, rule: RuleReference(id: "files", name: nil), source: .policy,
                reason: "rule 'files' found no credential for this protection space"
            )
        }
        #expect(plan.reasonCode == .noCredential)
        let rejecting = Policy(rules: [PolicyRule(id: "files", match: RuleMatch(), then: RuleAction(disposition: .rejectProtectionSpace))])
        let other = try ResponseDecider.plan(context([#"Basic realm="b""#]), policy: rejecting) { _ in
            DecisionPlan(disposition: .rejectProtectionSpace, scope: .task, rule: RuleReference(id: "files", name: nil), source: .policy, reason: "r")
        }
        #expect(other.reasonCode == .policy)
    }

    @Test func nothingAnswerableIsDefaultHandling() throws {
        let decide = engine(releasing: [.negotiate, .httpBasic])
        let plan = try ResponseDecider.plan(
            context(["Negotiate", #"Bearer realm="api""#, #"Digest realm="d", nonce="n", algorithm=SHA-1"#]),
            policy: .empty,
            decide: decide
        )
        #expect(plan.chosen == nil)
        #expect(plan.plan.disposition == .performDefaultHandling)
        #expect(plan.plan.source == .unsupportedMethod)
        #expect(plan.reasonCode == .noSupportedChallenge)
        #expect(plan.space.method == .negotiate)
        #expect(plan.plan.scope == .session)
        #expect(plan.plansBySpaceKey.isEmpty)
        #expect(plan.selection.assessments.map(\.status) == [.unsupportedScheme, .unsupportedScheme, .unsupportedAlgorithm])
    }

    @Test func everyChallengeMalformedIsTheServersFault() throws {
        let decide = engine(releasing: [.httpDigest, .httpBasic])
        #expect(throws: CountersignError(.missingChallengeParameter, "")) {
            try ResponseDecider.plan(self.context([#"Digest realm="d", qop=auth"#]), policy: .empty, decide: decide)
        }
        #expect(throws: CountersignError(.duplicateParameter, "")) {
            try ResponseDecider.plan(self.context([#"Basic realm="a", realm="b""#, #"Digest realm="d""#]), policy: .empty, decide: decide)
        }
        // One good challenge is enough to answer; the broken one is reported.
        let plan = try ResponseDecider.plan(context([#"Digest realm="d", qop=auth"#, #"Basic realm="b""#]), policy: .empty, decide: decide)
        #expect(plan.chosen?.index == 1)
        #expect(plan.selection.assessments[0].status == .malformed(.missingChallengeParameter))
    }

    @Test func staleNoncesAndNTLMHaveTheirOwnCodes() throws {
        let decide = engine(releasing: [.httpDigest, .ntlm])
        let stale = try ResponseDecider.plan(context([#"Digest realm="d", nonce="n2", qop=auth, stale=TRUE"#]), policy: .empty, decide: decide)
        #expect(stale.reasonCode == .staleNonce)
        let ntlm = try ResponseDecider.plan(context(["Negotiate", "NTLM", #"Basic realm="b""#], status: 407), policy: .empty, decide: decide)
        #expect(ntlm.reasonCode == .ntlmHandshake)
        #expect(ntlm.space.isProxy && ntlm.space.realm == nil && ntlm.space.host == "proxy.example")
    }

    @Test func eachSpaceIsDecidedOnce() throws {
        var calls = 0
        _ = try ResponseDecider.plan(
            context([#"Digest realm="d", nonce="a", qop=auth"#, #"Digest realm="d", nonce="b", qop=auth"#, #"Digest realm="e", nonce="c", qop=auth"#]),
            policy: .empty
        ) { _ in
            calls += 1
            return DecisionPlan(disposition: .performDefaultHandling, scope: .task, source: .noMatchingRule, reason: "no rule")
        }
        #expect(calls == 2)
    }

    @Test func aRefusalStops() {
        let space = ProtectionSpace(host: "h", port: 443, protocolName: "https", realm: "r", authenticationMethod: .httpBasic)
        let plan = ResponseDecider.refusal(space: space, rule: RuleReference(id: "r", name: nil))
        #expect(plan.plan.disposition == .cancelAuthenticationChallenge)
        #expect(plan.plan.source == .serverResponse)
        #expect(plan.reasonCode == .serverRefused)
        #expect(plan.plan.credential == nil)
    }
}

@Suite("Preferred schemes")
struct PreferredSchemesTests {
    func settings(_ json: String) throws -> PolicySettings {
        try JSONDecoder().decode(PolicySettings.self, from: Data(json.utf8))
    }

    @Test func readsAndWritesMechanismNames() throws {
        let decoded = try settings(#"{"preferredSchemes": ["Digest SHA-256", "Basic", "NTLM", "Digest SHA-512-256", "Digest MD5"]}"#)
        #expect(decoded.schemePreference == [.digest(.sha256), .basic, .ntlm, .digest(.sha512_256), .digest(.md5)])
        let encoded = String(decoding: try JSONEncoder().encode(decoded), as: UTF8.self)
        #expect(encoded.contains(#"["Digest SHA-256","Basic","NTLM","Digest SHA-512-256","Digest MD5"]"#))
        #expect(try settings("{}").schemePreference == AuthenticationMechanism.defaultPreference)
    }

    @Test func refusesWhatCannotBeAnswered() throws {
        #expect(throws: CountersignError(.invalidEnumValue, "")) { try settings(#"{"preferredSchemes": ["Negotiate"]}"#) }
        #expect(throws: CountersignError(.invalidEnumValue, "")) { try settings(#"{"preferredSchemes": ["Digest SHA-1"]}"#) }
        // Spelled exactly as the contract's enum.
        #expect(throws: CountersignError(.invalidEnumValue, "")) { try settings(#"{"preferredSchemes": ["digest sha-256"]}"#) }
        let policy = { (schemes: [AuthenticationMechanism]) in Policy(settings: PolicySettings(preferredSchemes: schemes)) }
        #expect(throws: CountersignError(.invalidPolicy, "")) { try policy([]).validate { _ in true } }
        #expect(throws: CountersignError(.invalidPolicy, "")) { try policy([.basic, .basic]).validate { _ in true } }
        #expect(throws: CountersignError(.invalidPolicy, "")) { try policy([.basic, .negotiate]).validate { _ in true } }
        try policy([.digest(.sha256), .basic]).validate { _ in true }
    }
}
