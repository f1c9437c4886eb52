import CountersignCore
import Foundation
import Testing

/// The decision engine on TLS challenges, without OpenSSL: the plans it leaves pending and how
/// `resolve` finishes them.
@Suite struct TLSDecisionTests {
    static let tenantID = UUID()
    static let sessionID = UUID()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func space(_ method: AuthenticationMethod, host: String = "api.example.com", port: Int = 443) -> ProtectionSpace {
        ProtectionSpace(host: host, port: port, protocolName: "https", authenticationMethod: method)
    }

    static func inputs(
        _ method: AuthenticationMethod,
        rules: [PolicyRule],
        credentials: [Credential] = [],
        memory: [String: SessionMemoryEntry] = [:],
        blocked: [UUID: Date] = [:],
        digest: String? = nil
    ) -> DecisionInputs {
        DecisionInputs(
            challenge: Challenge(taskId: "t", protectionSpace: space(method)),
            policy: Policy(rules: rules),
            sessionID: sessionID,
            clientID: "device",
            sessionMemory: memory,
            credentials: DecisionCredentials(session: [], tenant: CredentialIndex(credentials)),
            blockedUntil: blocked,
            now: now,
            presentedChainDigest: digest
        )
    }

    static func rule(_ action: RuleAction, methods: [AuthenticationMethod]? = nil) -> PolicyRule {
        PolicyRule(id: "tls", match: RuleMatch(host: try! HostPattern("*.example.com"), methods: methods), then: action)
    }

    static func identity(subject: String, notBefore: Date = now - 86_400, notAfter: Date = now + 86_400, created: Date = now - 10) -> Credential {
        Credential(
            id: UUID(),
            tenantID: tenantID,
            kind: .clientIdentity,
            attributes: CredentialAttributes(host: "*", authenticationMethod: .clientCertificate, account: subject),
            domain: nil,
            label: nil,
            owner: .tenant(submittedBy: nil),
            secretVersion: 1,
            createdAt: created,
            updatedAt: created,
            certificate: IdentityCertificate(
                subject: subject,
                issuer: "CN=CA",
                serialNumber: "01",
                notBefore: notBefore,
                notAfter: notAfter,
                sha256Fingerprint: String(repeating: "a", count: 64),
                keyAlgorithm: "EC-prime256v1",
                chainSubjects: [],
                issuerNames: []
            )
        )
    }

    static func verdict(trusted: Bool, code: String? = nil) -> ServerTrustVerdict {
        ServerTrustVerdict(
            trusted: trusted,
            host: "api.example.com",
            failure: code.map { .init(code: $0, detail: "test", depth: 0) },
            verifiedChain: trusted ? ["CN=api.example.com", "CN=Root"] : [],
            leafSubject: "CN=api.example.com",
            matchedPin: nil,
            evaluatedAt: now,
            chainSHA256: String(repeating: "b", count: 64)
        )
    }

    // MARK: - Server trust

    @Test func serverTrustUseCredentialLeavesTheEvaluationPending() throws {
        let settings = TrustSettings(useSystemAnchors: false, pins: ["AAAA"])
        let plan = DecisionEngine.decide(Self.inputs(.serverTrust, rules: [Self.rule(RuleAction(disposition: .useCredential, trust: settings))], digest: "d1"))
        guard case .serverTrust(let pendingSettings, _) = plan.pending else {
            Issue.record("expected a pending server-trust evaluation, got \(plan)")
            return
        }
        #expect(pendingSettings == settings)
        #expect(plan.scope == .session)
        #expect(plan.memoryEntry(spaceKey: "ignored") == nil, "a pending plan is never remembered")
    }

    @Test func trustedVerdictAnswersUseCredentialAndIsRememberedUnderTheChain() throws {
        let inputs = Self.inputs(.serverTrust, rules: [Self.rule(RuleAction(disposition: .useCredential))], digest: "d1")
        let plan = DecisionEngine.resolve(DecisionEngine.decide(inputs), trust: Self.verdict(trusted: true))
        #expect(plan.disposition == .useCredential)
        #expect(plan.pending == nil)
        #expect(plan.trust?.trusted == true)
        let entry = try #require(plan.memoryEntry(spaceKey: Self.space(.serverTrust).key))
        #expect(entry.spaceKey == Self.space(.serverTrust).key + "|d1")
        #expect(entry.trust?.verifiedChain == ["CN=api.example.com", "CN=Root"])
    }

    @Test(arguments: [
        (nil, Disposition.cancelAuthenticationChallenge),
        (Disposition.rejectProtectionSpace, Disposition.rejectProtectionSpace),
        (Disposition.performDefaultHandling, Disposition.performDefaultHandling),
    ])
    func untrustedVerdictAnswersTheFailureDisposition(configured: Disposition?, expected: Disposition) {
        let action = RuleAction(disposition: .useCredential, failureDisposition: configured)
        let plan = DecisionEngine.resolve(
            DecisionEngine.decide(Self.inputs(.serverTrust, rules: [Self.rule(action)], digest: "d1")),
            trust: Self.verdict(trusted: false, code: "hostname_mismatch")
        )
        #expect(plan.disposition == expected)
        #expect(plan.trust?.failure?.code == "hostname_mismatch")
        #expect(plan.reason.contains("hostname_mismatch"))
        #expect(plan.memoryEntry(spaceKey: "k") == nil, "an untrusted chain is evaluated again next time")
    }

    @Test func sessionMemoryAnswersTheSameChainOnlyAndNeedsNoEvaluation() {
        let key = Self.space(.serverTrust).key
        let remembered = SessionMemoryEntry(
            spaceKey: key + "|d1", disposition: .useCredential, credentialID: nil, persistence: .forSession, ruleID: "tls", ruleName: nil,
            maxFailures: nil, blockedDisposition: nil, trust: Self.verdict(trusted: true)
        )
        let rules = [Self.rule(RuleAction(disposition: .useCredential))]
        let same = DecisionEngine.decide(Self.inputs(.serverTrust, rules: rules, memory: [key + "|d1": remembered], digest: "d1"))
        #expect(same.source == .session)
        #expect(same.pending == nil)
        #expect(same.disposition == .useCredential)
        #expect(same.trust?.trusted == true)

        let other = DecisionEngine.decide(Self.inputs(.serverTrust, rules: rules, memory: [key + "|d1": remembered], digest: "d2"))
        #expect(other.source == .policy)
        #expect(other.pending != nil, "another chain is evaluated again")
    }

    @Test func noRuleMeansDefaultHandlingWithoutEvaluation() {
        let plan = DecisionEngine.decide(
            Self.inputs(.serverTrust, rules: [Self.rule(RuleAction(disposition: .useCredential), methods: [.httpBasic])], digest: "d1")
        )
        #expect(plan.disposition == .performDefaultHandling)
        #expect(plan.source == .noMatchingRule)
        #expect(plan.pending == nil)
    }

    // MARK: - Client identities

    @Test func identitiesAreCandidatesValidLongestFirstAndNeverExpired() throws {
        let short = Self.identity(subject: "CN=short", notAfter: Self.now + 3_600)
        let long = Self.identity(subject: "CN=long", notAfter: Self.now + 864_000)
        let expired = Self.identity(subject: "CN=expired", notBefore: Self.now - 864_000, notAfter: Self.now - 1)
        let future = Self.identity(subject: "CN=future", notBefore: Self.now + 60, notAfter: Self.now + 9_999_999)
        let password = Credential(
            id: UUID(), tenantID: Self.tenantID, kind: .password, attributes: CredentialAttributes(host: "api.example.com", account: "svc"),
            domain: nil, label: nil, owner: .tenant(submittedBy: nil), secretVersion: 1, createdAt: Self.now, updatedAt: Self.now
        )
        let plan = DecisionEngine.decide(
            Self.inputs(.clientCertificate, rules: [Self.rule(RuleAction(disposition: .useCredential), methods: [.clientCertificate])], credentials: [short, expired, password, future, long])
        )
        guard case .identitySelection(let candidates, let explicit, _) = plan.pending else {
            Issue.record("expected a pending identity selection, got \(plan)")
            return
        }
        #expect(candidates.map(\.attributes.account) == ["CN=long", "CN=short"])
        #expect(!explicit)
    }

    @Test func onlyExpiredIdentitiesMeanTheFailureDisposition() {
        let expired = Self.identity(subject: "CN=expired", notBefore: Self.now - 864_000, notAfter: Self.now - 1)
        let action = RuleAction(disposition: .useCredential, failureDisposition: .rejectProtectionSpace)
        let plan = DecisionEngine.decide(Self.inputs(.clientCertificate, rules: [Self.rule(action, methods: [.clientCertificate])], credentials: [expired]))
        #expect(plan.disposition == .rejectProtectionSpace)
        #expect(plan.pending == nil)
        #expect(plan.credential == nil)

        let named = RuleAction(disposition: .useCredential, identityId: expired.id.uuidString.lowercased())
        let explicit = DecisionEngine.decide(Self.inputs(.clientCertificate, rules: [Self.rule(named)], credentials: [expired]))
        #expect(explicit.disposition == .cancelAuthenticationChallenge)
        #expect(explicit.reason.contains("expired"))
    }

    /// A rule that names no identity and does not list client certificates among its methods (one
    /// written for passwords, matching every method) releases no private key: only the identity
    /// it names, if any (found by review).
    @Test func aRuleThatDoesNotListClientCertificatesReleasesOnlyTheIdentityItNames() throws {
        let only = Self.identity(subject: "CN=only")
        let generic = DecisionEngine.decide(Self.inputs(.clientCertificate, rules: [Self.rule(RuleAction(disposition: .useCredential))], credentials: [only]))
        #expect(generic.disposition == .cancelAuthenticationChallenge && generic.credential == nil, "\(generic.reason)")
        #expect(generic.reason.contains("does not list client certificates"), "\(generic.reason)")
        let named = RuleAction(disposition: .useCredential, identityId: only.id.uuidString.lowercased())
        let plan = DecisionEngine.decide(Self.inputs(.clientCertificate, rules: [Self.rule(named)], credentials: [only]))
        guard case .identitySelection(let candidates, let explicit, _) = plan.pending else {
            Issue.record("expected a pending identity selection, got \(plan)")
            return
        }
        #expect(candidates.map(\.id) == [only.id] && explicit)
    }

    @Test func resolveReleasesTheFirstFittingUnblockedIdentityWithTheRulesPersistence() throws {
        let first = Self.identity(subject: "CN=first")
        let second = Self.identity(subject: "CN=second")
        let action = RuleAction(disposition: .useCredential, persistence: Persistence.none, maxFailures: 2)
        let inputs = Self.inputs(.clientCertificate, rules: [Self.rule(action, methods: [.clientCertificate])], credentials: [first, second], blocked: [first.id: Self.now + 60])
        let plan = DecisionEngine.resolve(DecisionEngine.decide(inputs), identities: [first, second], inputs: inputs)
        #expect(plan.disposition == .useCredential)
        #expect(plan.credential?.id == second.id)
        #expect(plan.persistence == Persistence.none)
        #expect(plan.maxFailures == 2)
        #expect(plan.memoryEntry(spaceKey: "k") == nil, "persistence none is remembered nowhere")
    }

    @Test func resolveWithNothingFittingOrEverythingBlocked() {
        let only = Self.identity(subject: "CN=only")
        let action = RuleAction(disposition: .useCredential, blockedDisposition: .performDefaultHandling, failureDisposition: .rejectProtectionSpace)
        let inputs = Self.inputs(.clientCertificate, rules: [Self.rule(action, methods: [.clientCertificate])], credentials: [only], blocked: [only.id: Self.now + 60])
        let pending = DecisionEngine.decide(inputs)

        let none = DecisionEngine.resolve(pending, identities: [], inputs: inputs)
        #expect(none.disposition == .rejectProtectionSpace)
        #expect(none.credential == nil)

        let blocked = DecisionEngine.resolve(pending, identities: [only], inputs: inputs)
        #expect(blocked.disposition == .performDefaultHandling)
        #expect(blocked.blockedUntil == Self.now + 60)
    }

    @Test func sessionMemoryNeverReleasesAnIdentityThatExpiredSince() {
        let identity = Self.identity(subject: "CN=was-valid", notBefore: Self.now - 864_000, notAfter: Self.now - 1)
        let key = Self.space(.clientCertificate).key
        let remembered = SessionMemoryEntry(
            spaceKey: key, disposition: .useCredential, credentialID: identity.id, persistence: .forSession, ruleID: "tls", ruleName: nil,
            maxFailures: 3, blockedDisposition: nil
        )
        let plan = DecisionEngine.decide(
            Self.inputs(.clientCertificate, rules: [Self.rule(RuleAction(disposition: .useCredential))], credentials: [identity], memory: [key: remembered])
        )
        #expect(plan.source == .policy)
        #expect(plan.disposition == .cancelAuthenticationChallenge)
        #expect(plan.credential == nil)
    }

    @Test func aPasswordRuleNamingAnIdentityByCredentialIdReleasesNothing() {
        let identity = Self.identity(subject: "CN=not-a-password")
        let action = RuleAction(disposition: .useCredential, credentialId: identity.id.uuidString.lowercased())
        let plan = DecisionEngine.decide(Self.inputs(.httpBasic, rules: [Self.rule(action)], credentials: [identity]))
        #expect(plan.credential == nil)
        #expect(plan.disposition == .cancelAuthenticationChallenge)
    }
}

extension TLSDecisionTests {
    /// A rule without `methods` matches client-certificate challenges too: one naming a password
    /// by id released the tenant's longest-valid identity (its private key) to any of its hosts
    /// that asked for a certificate; one naming an account released an identity of any subject.
    @Test func aRuleNamingAPasswordOrAnAccountReleasesNoOtherIdentity() {
        let identity = Self.identity(subject: "CN=device")
        let password = UUID().uuidString.lowercased()
        let byID = DecisionEngine.decide(
            Self.inputs(.clientCertificate, rules: [Self.rule(RuleAction(disposition: .useCredential, credentialId: password))], credentials: [identity])
        )
        #expect(byID.pending == nil)
        #expect(byID.disposition == .cancelAuthenticationChallenge)
        #expect(byID.reason.contains("password"))

        let otherAccount = DecisionEngine.decide(
            Self.inputs(.clientCertificate, rules: [Self.rule(RuleAction(disposition: .useCredential, account: "svc"))], credentials: [identity])
        )
        #expect(otherAccount.pending == nil)
        #expect(otherAccount.disposition == .cancelAuthenticationChallenge)

        // The account an identity is stored under is its subject: naming it selects that identity.
        let other = Self.identity(subject: "CN=other", notAfter: Self.now + 864_000)
        let bySubject = DecisionEngine.decide(
            Self.inputs(
                .clientCertificate, rules: [Self.rule(RuleAction(disposition: .useCredential, account: "CN=device"))], credentials: [other, identity]
            )
        )
        guard case .identitySelection(let candidates, _, _) = bySubject.pending else {
            Issue.record("expected a pending identity selection, got \(bySubject)")
            return
        }
        #expect(candidates.map(\.id) == [identity.id])
    }
}

extension TLSDecisionTests {
    /// A session remembered a trusted chain for its whole life (up to a day by default, as long as
    /// a policy allows): a leaf that expired meanwhile kept being answered useCredential from memory,
    /// where an evaluation says `expired`. The memory now holds until the verified path's first
    /// notAfter, through that second, as OpenSSL reads it.
    @Test func aRememberedTrustedChainIsEvaluatedAgainOnceACertificateOfItsPathExpired() {
        let key = Self.space(.serverTrust).key + "|d1"
        func remembered(until end: Date?) -> [String: SessionMemoryEntry] {
            var verdict = Self.verdict(trusted: true)
            verdict.validUntil = end
            return [
                key: SessionMemoryEntry(
                    spaceKey: key, disposition: .useCredential, credentialID: nil, persistence: .forSession, ruleID: "tls", ruleName: nil,
                    maxFailures: nil, blockedDisposition: nil, trust: verdict
                )
            ]
        }
        let rules = [Self.rule(RuleAction(disposition: .useCredential))]

        let expired = DecisionEngine.decide(Self.inputs(.serverTrust, rules: rules, memory: remembered(until: Self.now - 1), digest: "d1"))
        #expect(expired.source == .policy)
        guard case .serverTrust = expired.pending else {
            Issue.record("expected the chain evaluated again, got \(expired)")
            return
        }
        #expect(expired.passedOverMemory, "the decision is made past what the session remembers")

        for end in [Self.now, Self.now + 60, nil] {
            let valid = DecisionEngine.decide(Self.inputs(.serverTrust, rules: rules, memory: remembered(until: end), digest: "d1"))
            #expect(valid.source == .session, "valid until \(String(describing: end))")
            #expect(valid.pending == nil)
        }
    }
}
