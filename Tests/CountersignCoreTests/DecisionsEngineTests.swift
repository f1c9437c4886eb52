import CountersignCore
import Foundation
import Testing

/// Builds the engine's inputs with little noise.
struct EngineFixture {
    static let tenantID = UUID()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    var rules: [PolicyRule] = []
    var sessionID = UUID()
    var clientID = "device-1"
    var memory: [String: SessionMemoryEntry] = [:]
    var credentials: [Credential] = []
    var blockedUntil: [UUID: Date] = [:]

    static func space(
        host: String = "intranet.example.com",
        port: Int = 443,
        protocolName: String? = "https",
        realm: String? = "Intranet",
        method: AuthenticationMethod = .httpBasic,
        isProxy: Bool = false
    ) -> ProtectionSpace {
        ProtectionSpace(host: host, port: port, protocolName: protocolName, realm: realm, authenticationMethod: method, isProxy: isProxy)
    }

    static func credential(
        account: String = "svc",
        host: String = "intranet.example.com",
        port: Int? = nil,
        realm: String? = nil,
        method: AuthenticationMethod? = nil,
        isProxy: Bool = false,
        owner: CredentialOwner = .tenant(submittedBy: nil),
        updatedAt: Date = now.addingTimeInterval(-3600)
    ) -> Credential {
        Credential(
            id: UUID(),
            tenantID: tenantID,
            kind: .password,
            attributes: CredentialAttributes(host: host, port: port, realm: realm, authenticationMethod: method, isProxy: isProxy, account: account),
            domain: nil,
            label: nil,
            owner: owner,
            secretVersion: 1,
            createdAt: updatedAt,
            updatedAt: updatedAt
        )
    }

    static func rule(_ id: String, match: RuleMatch = RuleMatch(), then action: RuleAction) -> PolicyRule {
        PolicyRule(id: id, name: "rule \(id)", match: match, then: action)
    }

    func decide(_ space: ProtectionSpace = Self.space(), taskId: String = "task-1") -> DecisionPlan {
        DecisionEngine.decide(
            DecisionInputs(
                challenge: Challenge(taskId: taskId, protectionSpace: space),
                policy: Policy(rules: rules),
                sessionID: sessionID,
                clientID: clientID,
                sessionMemory: memory,
                credentials: DecisionCredentials(session: [], tenant: CredentialIndex(credentials)),
                blockedUntil: blockedUntil,
                now: Self.now
            )
        )
    }
}

@Suite("Decision engine")
struct DecisionsEngineTests {
    typealias F = EngineFixture

    @Test func anUnknownMethodIsDefaultHandlingEvenUnderACatchAllRule() {
        var fixture = F()
        fixture.rules = [F.rule("all", then: RuleAction(disposition: .cancelAuthenticationChallenge))]
        let plan = fixture.decide(F.space(method: AuthenticationMethod(rawValue: "NSURLAuthenticationMethodOAuth7")))
        #expect(plan.disposition == .performDefaultHandling)
        #expect(plan.source == .unsupportedMethod)
        #expect(plan.rule == nil)
        #expect(plan.credential == nil)
        #expect(!plan.rememberInSession)
    }

    /// The tenant's credentials are looked up by id and by host, not scanned: the same answers
    /// among thousands of other hosts' credentials, a host spelled unfolded included.
    @Test func theIndexFindsWhatAScanWould() {
        var fixture = F()
        fixture.credentials = (0..<2000).map { F.credential(account: "other-\($0)", host: "h\($0).example.com") }
        let wanted = F.credential(account: "svc", host: "Intranet.Example.COM.")
        let session = F.credential(account: "typed", host: "intranet.example.com", owner: .session(fixture.sessionID, clientID: fixture.clientID), updatedAt: F.now)
        fixture.credentials += [wanted, session]
        fixture.rules = [F.rule("release", then: RuleAction(disposition: .useCredential, account: "svc"))]
        #expect(fixture.decide().credential?.id == wanted.id)
        fixture.rules = [F.rule("release", then: RuleAction(disposition: .useCredential))]
        #expect(fixture.decide().credential?.id == session.id)
        fixture.rules = [F.rule("named", then: RuleAction(disposition: .useCredential, credentialId: wanted.id.text))]
        #expect(fixture.decide(F.space(host: "elsewhere.example.com")).credential?.id == wanted.id)
        fixture.rules = [F.rule("named", then: RuleAction(disposition: .useCredential, credentialId: UUID().uuidString))]
        #expect(fixture.decide().credential == nil)
    }

    @Test func noMatchingRuleIsDefaultHandling() {
        var fixture = F()
        fixture.rules = [F.rule("other", match: RuleMatch(host: try! HostPattern("other.example.com")), then: RuleAction(disposition: .cancelAuthenticationChallenge))]
        fixture.credentials = [F.credential()]
        let plan = fixture.decide()
        #expect(plan.disposition == .performDefaultHandling)
        #expect(plan.source == .noMatchingRule)
        #expect(plan.credential == nil)
        #expect(plan.persistence == Persistence.none)
    }

    @Test func theFirstMatchingRuleWins() {
        var fixture = F()
        fixture.rules = [
            F.rule("proxies", match: RuleMatch(isProxy: true), then: RuleAction(disposition: .rejectProtectionSpace)),
            F.rule("intranet", match: RuleMatch(host: try! HostPattern("*.example.com")), then: RuleAction(disposition: .cancelAuthenticationChallenge)),
            F.rule("all", then: RuleAction(disposition: .performDefaultHandling)),
        ]
        #expect(fixture.decide().rule?.id == "intranet")
        #expect(fixture.decide().rule?.name == "rule intranet")
        #expect(fixture.decide().disposition == .cancelAuthenticationChallenge)
        #expect(fixture.decide(F.space(isProxy: true)).disposition == .rejectProtectionSpace)
        #expect(fixture.decide(F.space(host: "elsewhere.org")).rule?.id == "all")
    }

    @Test func defaultOverHTTPIsBasic() {
        var fixture = F()
        let credential = F.credential(method: .httpBasic)
        fixture.credentials = [credential]
        fixture.rules = [F.rule("basic", match: RuleMatch(methods: [.httpBasic]), then: RuleAction(disposition: .useCredential))]
        let plan = fixture.decide(F.space(method: .default))
        #expect(plan.disposition == .useCredential)
        #expect(plan.credential?.id == credential.id)
        // Over FTP, Default stays Default: the Basic rule does not speak about it.
        #expect(fixture.decide(F.space(protocolName: "ftp", method: .default)).source == .noMatchingRule)
        // And a rule naming Default matches a Basic challenge over HTTPS.
        fixture.rules = [F.rule("default", match: RuleMatch(methods: [.default]), then: RuleAction(disposition: .rejectProtectionSpace))]
        #expect(fixture.decide(F.space(method: .httpBasic)).disposition == .rejectProtectionSpace)
        // A credential saved for Default, without a protocol, answers Basic and Default over
        // http(s), and only Default elsewhere.
        let saved = F.credential(method: .default)
        fixture.credentials = [saved]
        fixture.rules = [F.rule("any", then: RuleAction(disposition: .useCredential))]
        for space in [F.space(method: .default), F.space(method: .httpBasic), F.space(protocolName: "http", method: .default), F.space(protocolName: "ftp", method: .default)] {
            #expect(fixture.decide(space).credential?.id == saved.id, "\(space)")
        }
        #expect(fixture.decide(F.space(protocolName: "ftp", method: .httpBasic)).credential == nil)
    }

    @Test func releasesWithTheRulesPersistenceAndLimits() {
        var fixture = F()
        let credential = F.credential()
        fixture.credentials = [credential]
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential, persistence: .permanent, maxFailures: 7, blockSeconds: 60, blockedDisposition: .rejectProtectionSpace))]
        let plan = fixture.decide()
        #expect(plan.disposition == .useCredential)
        #expect(plan.persistence == .permanent)
        #expect(plan.maxFailures == 7)
        #expect(plan.blockSchedule == BlockSchedule(seconds: 60, incrementSeconds: 0, maximumSeconds: 86_400))
        #expect(plan.blockedDisposition == .rejectProtectionSpace)
        #expect(plan.scope == .task)
        #expect(plan.source == .policy)
        #expect(plan.rememberInSession)
        let entry = plan.memoryEntry(spaceKey: F.space().key)
        #expect(entry?.credentialID == credential.id)
        #expect(entry?.persistence == .permanent)
        #expect(entry?.maxFailures == 7)
    }

    @Test func defaultsAreForSessionThreeFailuresAndCancelWhenBlocked() {
        var fixture = F()
        fixture.credentials = [F.credential()]
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential))]
        let plan = fixture.decide()
        #expect(plan.persistence == .forSession)
        #expect(plan.maxFailures == 3)
        #expect(plan.blockSchedule == .default)
        #expect(plan.blockedDisposition == .cancelAuthenticationChallenge)
    }

    @Test func persistenceNoneIsNeverRemembered() {
        var fixture = F()
        fixture.credentials = [F.credential()]
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential, persistence: Persistence.none))]
        let plan = fixture.decide()
        #expect(plan.disposition == .useCredential)
        #expect(plan.persistence == Persistence.none)
        #expect(!plan.rememberInSession)
        #expect(plan.memoryEntry(spaceKey: "k") == nil)
    }

    @Test func sessionMemoryIsServedWithoutThePolicy() {
        var fixture = F()
        let credential = F.credential()
        fixture.credentials = [credential]
        // The policy now cancels; the session still holds what it was given.
        fixture.rules = [F.rule("now-cancel", then: RuleAction(disposition: .cancelAuthenticationChallenge))]
        let key = F.space().key
        fixture.memory[key] = SessionMemoryEntry(
            spaceKey: key, disposition: .useCredential, credentialID: credential.id, persistence: .forSession,
            ruleID: "old", ruleName: "old rule", maxFailures: 5, blockedDisposition: .rejectProtectionSpace
        )
        let plan = fixture.decide()
        #expect(plan.disposition == .useCredential)
        #expect(plan.credential?.id == credential.id)
        #expect(plan.source == .session)
        #expect(plan.rule?.id == "old")
        #expect(plan.maxFailures == 5)
        #expect(plan.persistence == .forSession)
        #expect(!plan.rememberInSession)
        // Another protection space of the same session goes to the policy.
        #expect(fixture.decide(F.space(realm: "Other")).disposition == .cancelAuthenticationChallenge)
        // Default over HTTPS is the same space as Basic: the memory holds for it too.
        #expect(fixture.decide(F.space(method: .default)).source == .session)
    }

    @Test func aRememberedCredentialThatIsGoneFallsBackToThePolicy() {
        var fixture = F()
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .rejectProtectionSpace))]
        let key = F.space().key
        fixture.memory[key] = SessionMemoryEntry(
            spaceKey: key, disposition: .useCredential, credentialID: UUID(), persistence: .forSession,
            ruleID: nil, ruleName: nil, maxFailures: nil, blockedDisposition: nil
        )
        let plan = fixture.decide()
        #expect(plan.source == .policy)
        #expect(plan.disposition == .rejectProtectionSpace)
        // Decided past the memory: the recorder must not take the memory for one written meanwhile.
        #expect(plan.passedOverMemory)
        #expect(!fixture.decide(F.space(realm: "Other")).passedOverMemory)
    }

    /// An admin who moves a credential to another host, realm or proxy takes it away from the
    /// sessions that remembered it, unless the releasing rule names it by id (then the rule's
    /// match, not the credential's attributes, says where it answers).
    @Test(arguments: [
        ("host", F.credential(host: "other.example.com"), false),
        ("realm", F.credential(realm: "Elsewhere"), false),
        ("proxy", F.credential(isProxy: true), false),
        ("proxy, rule names it", F.credential(isProxy: true), true),
        ("host, rule names it", F.credential(host: "other.example.com"), true),
    ])
    func aRememberedCredentialMovedElsewhereNoLongerAnswers(change: String, moved: Credential, namedByRule: Bool) {
        var fixture = F()
        fixture.credentials = [moved]
        let action = RuleAction(disposition: .cancelAuthenticationChallenge, credentialId: namedByRule ? moved.id.text : nil)
        fixture.rules = [F.rule("r", then: action)]
        let key = F.space().key
        fixture.memory[key] = SessionMemoryEntry(
            spaceKey: key, disposition: .useCredential, credentialID: moved.id, persistence: .forSession,
            ruleID: "r", ruleName: nil, maxFailures: 5, blockedDisposition: nil
        )
        let plan = fixture.decide()
        let servedFromMemory = namedByRule && !moved.attributes.isProxy
        #expect(plan.source == (servedFromMemory ? .session : .policy), "\(change)")
        #expect(plan.disposition == (servedFromMemory ? .useCredential : .cancelAuthenticationChallenge), "\(change)")
    }

    @Test func aRememberedCredentialThatIsBlockedAnswersItsBlockedDisposition() {
        var fixture = F()
        let credential = F.credential()
        fixture.credentials = [credential]
        fixture.blockedUntil = [credential.id: F.now.addingTimeInterval(60)]
        let key = F.space().key
        fixture.memory[key] = SessionMemoryEntry(
            spaceKey: key, disposition: .useCredential, credentialID: credential.id, persistence: .forSession,
            ruleID: "r", ruleName: nil, maxFailures: 2, blockedDisposition: .rejectProtectionSpace
        )
        let plan = fixture.decide()
        #expect(plan.disposition == .rejectProtectionSpace)
        #expect(plan.credential == nil)
        #expect(plan.blockedUntil == F.now.addingTimeInterval(60))
        #expect(plan.source == .session)
    }

    @Test func sessionWideAnswersAreRememberedAndScopedToTheSession() {
        var fixture = F()
        fixture.rules = [F.rule("ntlm", match: RuleMatch(methods: [.ntlm, .negotiate]), then: RuleAction(disposition: .rejectProtectionSpace))]
        let plan = fixture.decide(F.space(method: .ntlm))
        #expect(plan.scope == .session)
        #expect(plan.rememberInSession)
        #expect(fixture.decide(F.space(method: .negotiate)).scope == .session)
        // A task-specific method's answer is not remembered unless it releases a credential.
        fixture.rules = [F.rule("basic", then: RuleAction(disposition: .rejectProtectionSpace))]
        let basic = fixture.decide()
        #expect(basic.scope == .task)
        #expect(!basic.rememberInSession)
    }

    @Test func ownersComeInLookupOrder() {
        var fixture = F()
        let admin = F.credential(account: "admin")
        let synchronizable = F.credential(account: "sync", owner: .tenant(submittedBy: "device-9"))
        let permanent = F.credential(account: "mine", owner: .client("device-1"))
        let otherClient = F.credential(account: "theirs", owner: .client("device-2"), updatedAt: F.now)
        let session = F.credential(account: "session", owner: .session(fixture.sessionID, clientID: "device-1"))
        let otherSession = F.credential(account: "other-session", owner: .session(UUID(), clientID: "device-1"), updatedAt: F.now)
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential))]

        fixture.credentials = [admin, synchronizable, permanent, otherClient, session, otherSession]
        #expect(fixture.decide().credential?.id == session.id)
        fixture.credentials.removeAll { $0.id == session.id }
        #expect(fixture.decide().credential?.id == permanent.id)
        fixture.credentials.removeAll { $0.id == permanent.id }
        #expect(fixture.decide().credential?.id == synchronizable.id)
        fixture.credentials.removeAll { $0.id == synchronizable.id }
        #expect(fixture.decide().credential?.id == admin.id)
        fixture.credentials.removeAll { $0.id == admin.id }
        // What is left belongs to another client and another session: never released here.
        let plan = fixture.decide()
        #expect(plan.credential == nil)
        #expect(plan.disposition == .cancelAuthenticationChallenge)
    }

    @Test func amongOneOwnerTheMostSpecificThenTheNewestWins() {
        var fixture = F()
        let loose = F.credential(account: "loose", updatedAt: F.now)
        let specific = F.credential(account: "specific", port: 443, realm: "Intranet", updatedAt: F.now.addingTimeInterval(-9000))
        let older = F.credential(account: "older", port: 443, realm: "Intranet", updatedAt: F.now.addingTimeInterval(-10000))
        fixture.credentials = [loose, older, specific]
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential))]
        #expect(fixture.decide().credential?.id == specific.id)
    }

    @Test func credentialsMustFitTheSpace() {
        var fixture = F()
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential, failureDisposition: .rejectProtectionSpace))]
        fixture.credentials = [
            F.credential(host: "other.example.com"),
            F.credential(port: 8443),
            F.credential(realm: "Elsewhere"),
            F.credential(method: .httpDigest),
            F.credential(isProxy: true),
        ]
        let plan = fixture.decide()
        #expect(plan.credential == nil)
        #expect(plan.disposition == .rejectProtectionSpace)
        #expect(plan.reason.contains("found no credential"))
    }

    @Test func aFullyQualifiedNameFitsTheHostsCredentials() {
        var fixture = F()
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential))]
        let credential = F.credential(host: "intranet.example.com.")
        fixture.credentials = [credential]
        #expect(fixture.decide().credential?.id == credential.id, "a credential saved for the FQDN fits the host")
        #expect(credential.attributes.fits(F.space(host: "Intranet.Example.com.").normalized))
        #expect(F.credential(host: "intranet.example.com").attributes.fits(F.space(host: "intranet.example.com.").normalized))
    }

    @Test func proxiesAndOriginsNeverShareCredentials() {
        var fixture = F()
        let origin = F.credential(account: "origin")
        let proxy = F.credential(account: "proxy", isProxy: true)
        fixture.credentials = [origin, proxy]
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential))]
        #expect(fixture.decide().credential?.id == origin.id)
        #expect(fixture.decide(F.space(isProxy: true)).credential?.id == proxy.id)
        #expect(F.space().key != F.space(isProxy: true).key)
        // Even a rule naming the credential by id does not hand an origin's to a proxy.
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential, credentialId: origin.id.uuidString))]
        #expect(fixture.decide(F.space(isProxy: true)).credential == nil)
    }

    @Test func aRuleNamesItsCredentialByIdOrByAccount() {
        var fixture = F()
        let first = F.credential(account: "first", updatedAt: F.now)
        let second = F.credential(account: "second")
        fixture.credentials = [first, second]
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential, credentialId: second.id.uuidString.lowercased()))]
        #expect(fixture.decide().credential?.id == second.id)
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential, credentialId: second.id.uuidString.uppercased()))]
        #expect(fixture.decide().credential?.id == second.id)
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential, account: "second"))]
        #expect(fixture.decide().credential?.id == second.id)
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential, account: "nobody"))]
        #expect(fixture.decide().credential == nil)
    }

    @Test func blockedCredentialsAreSkippedAndWhenAllAreBlockedTheRuleSaysWhat() {
        var fixture = F()
        let first = F.credential(account: "first", updatedAt: F.now)
        let second = F.credential(account: "second")
        fixture.credentials = [first, second]
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential, maxFailures: 4, blockedDisposition: .rejectProtectionSpace))]
        fixture.blockedUntil = [first.id: F.now.addingTimeInterval(30)]
        #expect(fixture.decide().credential?.id == second.id)

        fixture.blockedUntil[second.id] = F.now.addingTimeInterval(10)
        let blocked = fixture.decide()
        #expect(blocked.disposition == .rejectProtectionSpace)
        #expect(blocked.credential == nil)
        #expect(blocked.blockedUntil == F.now.addingTimeInterval(10))
        #expect(blocked.maxFailures == 4)

        // A block that ended is no block.
        fixture.blockedUntil = [first.id: F.now, second.id: F.now.addingTimeInterval(-1)]
        #expect(fixture.decide().credential?.id == first.id)
    }

    @Test func tlsMethodsAreNotAnsweredWithPasswords() {
        var fixture = F()
        fixture.credentials = [F.credential()]
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential))]
        // Server trust is evaluated (the plan waits for the evaluator), never a password released.
        let trust = fixture.decide(F.space(method: .serverTrust))
        #expect(trust.credential == nil)
        guard case .serverTrust = trust.pending else {
            Issue.record("expected a pending server-trust evaluation, got \(trust)")
            return
        }
        #expect(trust.scope == .session)
        // A client certificate needs a client identity; a password does not fit: failure disposition.
        let certificate = fixture.decide(F.space(method: .clientCertificate))
        #expect(certificate.credential == nil)
        #expect(certificate.pending == nil)
        #expect(certificate.disposition == .cancelAuthenticationChallenge)
        #expect(certificate.scope == .session)
    }

    @Test func ntlmReleasesPasswordsForTheWholeSession() {
        var fixture = F()
        let credential = F.credential(method: .ntlm)
        fixture.credentials = [credential]
        fixture.rules = [F.rule("r", then: RuleAction(disposition: .useCredential))]
        let plan = fixture.decide(F.space(method: .ntlm))
        #expect(plan.credential?.id == credential.id)
        #expect(plan.scope == .session)
        #expect(plan.rememberInSession)
    }
}

@Suite("Decision values")
struct DecisionsValueTests {
    @Test func protectionSpaceKeysFoldCaseAndKeepTargetsApart() {
        let space = EngineFixture.space(host: "Intranet.EXAMPLE.com", protocolName: "HTTPS")
        #expect(space.key == EngineFixture.space().key)
        #expect(space.key == "origin|https|intranet.example.com|443|Intranet|NSURLAuthenticationMethodHTTPBasic")
        #expect(EngineFixture.space(isProxy: true).key.hasPrefix("proxy|"))
        #expect(EngineFixture.space(realm: "intranet").key != space.key)
        #expect(EngineFixture.space(port: 8443).key != space.key)
        // TLS challenges have no realm.
        #expect(EngineFixture.space(realm: "a", method: .serverTrust).key == EngineFixture.space(realm: "b", method: .serverTrust).key)
    }

    @Test func protectionSpaceKeysAreUnambiguous() {
        let piped = EngineFixture.space(realm: "a|b")
        let escaped = EngineFixture.space(realm: "a%7Cb")
        #expect(piped.key != escaped.key)
        #expect(piped.key.split(separator: "|").count == 6)
    }

    @Test func sessionsReadAsInvalidatedOnceExpired() {
        let now = EngineFixture.now
        let session = Session(
            id: UUID(), tenantID: UUID(), clientId: "c", label: nil, createdAt: now.addingTimeInterval(-10),
            expiresAt: now, invalidatedAt: nil, invalidationReason: nil, invalidationMode: nil
        )
        #expect(session.isActive(at: now.addingTimeInterval(-1)))
        #expect(!session.isActive(at: now))
        let observed = session.observed(at: now.addingTimeInterval(5))
        #expect(observed.invalidatedAt == now)
        #expect(observed.invalidationReason == .expired)
        #expect(session.observed(at: now.addingTimeInterval(-1)).invalidatedAt == nil)
    }

    @Test func persistencesAreOrdered() {
        #expect(Persistence.none < .forSession)
        #expect(Persistence.forSession < .permanent)
        #expect(Persistence.permanent < .synchronizable)
    }
}
