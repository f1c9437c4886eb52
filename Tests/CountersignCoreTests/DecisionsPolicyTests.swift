import CountersignCore
import Foundation
import Testing

@Suite("Host patterns")
struct DecisionsHostPatternTests {
    @Test(arguments: [
        ("api.example.com", "api.example.com"),
        ("api.example.com", "API.Example.COM"),
        ("*.corp.example.com", "a.corp.example.com"),
        ("*.corp.example.com", "a.b.corp.example.com"),
        ("*", "anything.at.all"),
        ("10.0.0.?", "10.0.0.7"),
        ("api-*.example.com", "api-eu.example.com"),
        ("*.example.*", "www.example.org"),
        ("intranet*", "intranet2"),
        ("[::1]", "[::1]"),
        ("[fe80::*]", "[fe80::1]"),
    ])
    func matches(pattern: String, host: String) throws {
        #expect(try HostPattern(pattern).matches(host))
    }

    @Test(arguments: [
        ("*.corp.example.com", "corp.example.com"),
        ("*.corp.example.com", "evilcorp.example.com"),
        ("*.corp.example.com", "a.corp.example.com.evil.org"),
        ("api.example.com", "api.example.co"),
        ("api.example.com", "xapi.example.com"),
        ("10.0.0.?", "10.0.0.17"),
        ("10.0.0.?", "10.0.0."),
        // Every star eats at least one character, a trailing one too.
        ("intranet*", "intranet"),
        ("*.example.*", "www.example."),
        ("a*b*c", "abc"),
    ])
    func doesNotMatch(pattern: String, host: String) throws {
        #expect(try !HostPattern(pattern).matches(host))
    }

    @Test(arguments: ["", "**.example.com", "a..b", "example.com.", "exa mple.com", "example.com/path", "ex$ample.com", "über.example.com", "[", "a]b", ".a.com", "[::1", "[g::1]",
        // The Kelvin sign, which lower-cases to an ASCII k.
        "\u{212A}.example.com"])
    func refusesBadGlobs(pattern: String) {
        #expect(throws: CountersignError(.invalidHostPattern, "")) { try HostPattern(pattern) }
    }

    /// A host never carries a port, scheme or path: a glob that does can match no challenge, so
    /// a rule written with one would silently never apply. `*:443` could be read as IPv6
    /// addresses ending in a group `443`, but whoever writes it means port 443.
    @Test(arguments: ["example.com:443", "*.example.com:8443", "10.0.0.1:8080", "intranet:80", "*:443x", "example.com:*", "cafe:443", "*:443", "?:8080", "*:0"])
    func refusesGlobsWithAPort(pattern: String) {
        #expect(throws: CountersignError(.invalidHostPattern, "")) { try HostPattern(pattern) }
    }

    /// Nor does a host a challenge or credential names: the space carries its port apart.
    /// `cafe:443` and `db:5432` included: a name of hex digits with a port is no IPv6 address,
    /// which has at least two `:`.
    @Test(arguments: ["example.com:443", "10.0.0.1:8080", "intranet:80", "::1.2:3", "host:", "cafe:443", "db:5432", "[cafe:443]"])
    func refusesHostsWithAPort(host: String) {
        #expect(throws: CountersignError(.invalidField, "")) { try EngineFixture.space(host: host).validate() }
        #expect(throws: CountersignError(.invalidField, "")) { try EngineFixture.credential(host: host).attributes.validate() }
    }

    @Test(arguments: ["::1", "2001:db8::7", "::ffff:10.0.0.1", "fe80::1%en0", "[fe80::1%25en0]", "[::1]", "intranet.example.com"])
    func takesHostsWithoutAPort(host: String) throws {
        try EngineFixture.space(host: host).validate()
        try EngineFixture.credential(host: host).attributes.validate()
    }

    @Test(arguments: [("::1", "::1"), ("fe80::*", "fe80::1"), ("::ffff:10.0.0.?", "::ffff:10.0.0.7"), ("*::443", "2001:db8::443"), ("fe80:*", "fe80::1"), ("*:beef", "2001:db8::beef")])
    func takesUnbracketedIPv6Globs(pattern: String, host: String) throws {
        #expect(try HostPattern(pattern).matches(host))
    }

    @Test func aBadGlobInAPolicyNamesTheRuleAndField() throws {
        let json = #"{"rules": [{"id": "ok", "match": {}, "then": {"disposition": "rejectProtectionSpace"}}, {"id": "r", "match": {"host": "example.com:443"}, "then": {"disposition": "rejectProtectionSpace"}}]}"#
        do {
            _ = try JSONDecoder().decode(Policy.self, from: Data(json.utf8))
            Issue.record("a glob with a port was taken")
        } catch let error as CountersignError {
            #expect(error.code == .invalidHostPattern)
            #expect(error.message.contains("'rules[1].match.host'"), "\(error.message)")
        }
    }

    /// Hosts are matched in their ASCII form (IDNA, as Apple's `URL` reports them), whichever
    /// form a challenge sends: globs name internationalized labels that way.
    @Test(arguments: [
        ("*.xn--bcher-kva.example", "a.bücher.example"), ("*.xn--bcher-kva.example", "a.xn--bcher-kva.example"), ("xn--wgv71a.example", "日本.example"),
        ("*.xn--zca.example", "a.ß.example"), ("ix.example", "Ⅸ.example"),
    ])
    func hostsAreMatchedInTheirASCIIForm(pattern: String, host: String) throws {
        #expect(try HostPattern(pattern).matches(host))
    }

    /// A refused internationalized glob says what to write instead.
    @Test func anInternationalizedGlobIsRefusedWithItsASCIIForm() {
        let refusal = #expect(throws: CountersignError.self) { try HostPattern("*.bücher.example") }
        #expect(refusal?.message.contains("'*.xn--bcher-kva.example'") == true, "\(String(describing: refusal))")
    }

    /// `?` is one character of a host, not one byte of its UTF-8, for a host with no ASCII form
    /// (IDNA refuses Arabic-Indic digits here).
    @Test(arguments: [("???.example", "١٢٣.example"), ("*.?.example", "a.١.example")])
    func aQuestionMarkIsOneCharacter(pattern: String, host: String) throws {
        #expect(ProtectionSpace.foldedHost(host) == host, "the host has an ASCII form: pick another")
        #expect(try HostPattern(pattern).matches(host))
    }

    @Test(arguments: [("??????.example", "١٢٣.example")])
    func aQuestionMarkIsNotOneByte(pattern: String, host: String) throws {
        #expect(try !HostPattern(pattern).matches(host))
    }

    @Test func refusesOverlongGlobs() {
        #expect(throws: CountersignError(.invalidHostPattern, "")) { try HostPattern(String(repeating: "a", count: 254)) }
        #expect(throws: Never.self) { try HostPattern(String(repeating: "a", count: 253)) }
    }

    @Test func adversarialPatternsStayLinear() throws {
        let pattern = try HostPattern("*a*a*a*a*a*a*a*a*a*a*a*b")
        let host = String(repeating: "a", count: 253)
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(!pattern.matches(host)) }
        #expect(elapsed < .seconds(1))
    }

    @Test func decodesFromJSONAndRefusesBadGlobsThere() throws {
        let decoded = try JSONDecoder().decode([HostPattern].self, from: Data(#"["*.example.com"]"#.utf8))
        #expect(decoded.first?.pattern == "*.example.com")
        #expect(throws: CountersignError(.invalidHostPattern, "")) {
            try JSONDecoder().decode([HostPattern].self, from: Data(#"["a..b"]"#.utf8))
        }
    }
}

@Suite("Rule matching")
struct DecisionsRuleMatchTests {
    typealias F = EngineFixture

    @Test func anEmptyMatchFitsEverything() {
        #expect(RuleMatch().matches(F.space().normalized))
        #expect(RuleMatch().matches(F.space(isProxy: true).normalized))
    }

    @Test func everyFieldGivenMustFit() throws {
        let match = RuleMatch(
            host: try HostPattern("*.example.com"),
            port: 443,
            protocolName: "HTTPS",
            realm: "Intranet",
            methods: [.httpBasic, .httpDigest],
            isProxy: false
        )
        #expect(match.matches(F.space().normalized))
        #expect(match.matches(F.space(method: .httpDigest).normalized))
        #expect(match.matches(F.space(method: .default).normalized))
        #expect(!match.matches(F.space(host: "example.org").normalized))
        #expect(!match.matches(F.space(port: 80).normalized))
        #expect(!match.matches(F.space(protocolName: "http").normalized))
        #expect(!match.matches(F.space(protocolName: nil).normalized))
        #expect(!match.matches(F.space(realm: "intranet").normalized))
        #expect(!match.matches(F.space(realm: nil).normalized))
        #expect(!match.matches(F.space(method: .ntlm).normalized))
        #expect(!match.matches(F.space(isProxy: true).normalized))
    }

    @Test func proxyOrOrigin() {
        #expect(RuleMatch(isProxy: true).matches(F.space(isProxy: true).normalized))
        #expect(!RuleMatch(isProxy: true).matches(F.space().normalized))
        #expect(RuleMatch(isProxy: false).matches(F.space().normalized))
    }

    @Test func anIPv6AddressWithOrWithoutBracketsIsOneHost() throws {
        // A forwarded raw response's URL brackets the address; a client's protection space may not.
        #expect(F.space(host: "::1").key == F.space(host: "[::1]").key, "one counter and one memory per address")
        #expect(F.space(host: "2001:DB8::7").normalized.host == "[2001:db8::7]")
        for (pattern, host) in [("::1", "[::1]"), ("[::1]", "::1"), ("fe80::*", "[fe80::1]"), ("[fe80::*]", "fe80::1")] {
            #expect(try HostPattern(pattern).matches(host), "\(pattern) \(host)")
        }
        #expect(F.credential(host: "::1").attributes.fits(F.space(host: "[::1]").normalized))
        #expect(F.credential(host: "[::1]").attributes.fits(F.space(host: "::1").normalized))
    }

    @Test func noRealmIsTheEmptyRealm() throws {
        // The space's key, which session memory and counters go by, reads no realm as "": rules
        // and credentials must too, or a remembered answer reaches a space they would not.
        let policy = Policy(rules: [
            PolicyRule(id: "empty", match: RuleMatch(realm: ""), then: RuleAction(disposition: .cancelAuthenticationChallenge)),
            PolicyRule(id: "anything", match: RuleMatch(), then: RuleAction(disposition: .performDefaultHandling)),
        ])
        #expect(F.space(realm: nil).key == F.space(realm: "").key)
        #expect(policy.rule(for: F.space(realm: nil).normalized)?.id == "empty")
        #expect(policy.rule(for: F.space(realm: "").normalized)?.id == "empty")
        #expect(policy.rule(for: F.space(realm: "Intranet").normalized)?.id == "anything")
        #expect(F.credential(realm: "").attributes.fits(F.space(realm: nil).normalized))
        #expect(!F.credential(realm: "").attributes.fits(F.space(realm: "Intranet").normalized))
        #expect(!F.credential(realm: "Intranet").attributes.fits(F.space(realm: nil).normalized))
    }

    @Test func aFullyQualifiedNameIsTheSameHost() throws {
        // `www.bank.example.` is the host `www.bank.example` (DNS, and the trust evaluation,
        // ignore the trailing dot): it must not slip past the rules written for that host to a
        // later, looser one.
        let policy = Policy(rules: [
            PolicyRule(id: "pinned", match: RuleMatch(host: try HostPattern("*.bank.example")), then: RuleAction(disposition: .cancelAuthenticationChallenge)),
            PolicyRule(id: "exact", match: RuleMatch(host: try HostPattern("api.example.com")), then: RuleAction(disposition: .rejectProtectionSpace)),
            PolicyRule(id: "anything", match: RuleMatch(), then: RuleAction(disposition: .performDefaultHandling)),
        ])
        #expect(policy.rule(for: F.space(host: "www.bank.example."))?.id == "pinned")
        #expect(policy.rule(for: F.space(host: "WWW.Bank.Example."))?.id == "pinned")
        #expect(policy.rule(for: F.space(host: "api.example.com."))?.id == "exact")
        #expect(try HostPattern("*.bank.example").matches("www.bank.example."))
        #expect(F.space(host: "Intranet.Example.com.").key == F.space().key, "one counter and one memory per host")
        #expect(F.space(host: "intranet.example.com.").normalized.host == "intranet.example.com")
    }

    @Test func unknownFieldsAndBadValuesAreRefusedWhenDecoding() {
        #expect(throws: CountersignError(.invalidHostPattern, "")) {
            try JSONDecoder().decode(RuleMatch.self, from: Data(#"{"host": "a..b"}"#.utf8))
        }
        #expect(throws: CountersignError(.invalidEnumValue, "")) {
            try JSONDecoder().decode(RuleAction.self, from: Data(#"{"disposition": "useTheForce"}"#.utf8))
        }
    }
}

/// Apple's `URLProtectionSpace`: a proxy space has a nil `protocol` and its type in `proxyType`,
/// and port 0 is "the default port for the protocol" (80 for http, 443 for https).
@Suite("Protection spaces as Apple builds them")
struct AppleProtectionSpaceTests {
    typealias F = EngineFixture

    /// What URLSession forwards for a 407 from an http proxy.
    static func appleProxySpace(method: AuthenticationMethod = .default) -> ProtectionSpace {
        ProtectionSpace(host: "proxy.example.com", port: 8080, protocolName: nil, realm: "Proxy", authenticationMethod: method, isProxy: true, proxyType: "http")
    }

    /// What a forwarded raw 407 from the same proxy becomes (`RawResponseContext`).
    static func rawResponseProxySpace() -> ProtectionSpace {
        ProtectionSpace(host: "proxy.example.com", port: 8080, protocolName: "http", realm: "Proxy", authenticationMethod: .httpBasic, isProxy: true, proxyType: "http")
    }

    @Test func oneProxyHasOneKeyHoweverItsChallengeArrives() {
        #expect(Self.appleProxySpace().key == Self.rawResponseProxySpace().key)
        #expect(Self.appleProxySpace(method: .httpBasic).key == Self.rawResponseProxySpace().key)
    }

    @Test func aRuleAndACredentialForAProxysProtocolFitApplesProxySpace() throws {
        let match = RuleMatch(protocolName: "http", methods: [.httpBasic], isProxy: true)
        #expect(match.matches(Self.appleProxySpace().normalized))
        let attributes = CredentialAttributes(host: "proxy.example.com", protocolName: "http", authenticationMethod: .httpBasic, isProxy: true, account: "p")
        #expect(attributes.fits(Self.appleProxySpace().normalized))
    }

    @Test func portZeroIsTheProtocolsDefaultPort() {
        let zero = F.space(port: 0)
        #expect(zero.key == F.space(port: 443).key)
        #expect(F.space(port: 0, protocolName: "http").key == F.space(port: 80, protocolName: "http").key)
        #expect(RuleMatch(port: 443).matches(zero.normalized))
        #expect(CredentialAttributes(host: "intranet.example.com", port: 443, protocolName: "https", account: "a").fits(zero.normalized))
        #expect(CredentialAttributes(host: "intranet.example.com", port: 0, protocolName: "https", account: "a").fits(F.space(port: 443).normalized))
        // Without a protocol there is no default to read 0 as.
        #expect(F.space(port: 0, protocolName: nil).key != F.space(port: 443, protocolName: nil).key)
        #expect(!RuleMatch(port: 443).matches(F.space(port: 0, protocolName: "securitycheck").normalized))
    }

    /// A rule's port 0 is its protocol's default port, as a credential's is: a rule for
    /// `{"protocol": "https", "port": 0}` matched no https challenge at all.
    @Test func aRulesPortZeroIsItsProtocolsDefaultPort() {
        #expect(RuleMatch(port: 0, protocolName: "https").matches(F.space(port: 443).normalized))
        #expect(RuleMatch(port: 0, protocolName: "HTTPS").matches(F.space(port: 0).normalized))
        #expect(RuleMatch(port: 0, protocolName: "http").matches(F.space(port: 80, protocolName: "http").normalized))
        #expect(!RuleMatch(port: 0, protocolName: "https").matches(F.space(port: 8443).normalized))
        // Without a protocol there is no default to read 0 as.
        #expect(!RuleMatch(port: 0).matches(F.space(port: 443).normalized))
        #expect(RuleMatch(port: 0).matches(F.space(port: 0, protocolName: nil).normalized))
    }
}

@Suite("Policy validation codes")
struct PolicyValidationCodeTests {
    static func validate(_ action: RuleAction, match: RuleMatch = RuleMatch()) throws {
        try Policy(rules: [PolicyRule(id: "r", match: match, then: action)]).validate { _ in true }
    }

    /// openapi.yaml (`replacePolicy`): a member outside its own limits is `invalid_field` named by
    /// its path, as in every request; what only a policy says is `invalid_policy`.
    @Test func aValueOutOfItsRangeIsInvalidFieldNamedByItsPath() {
        do {
            try Self.validate(RuleAction(disposition: .useCredential, maxFailures: 0))
            Issue.record("maxFailures 0 was taken")
        } catch let error as CountersignError {
            #expect(error.code == .invalidField)
            #expect(error.message.hasPrefix("'rules[0].then.maxFailures'"), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
        #expect(throws: CountersignError(.invalidField, "")) { try Self.validate(RuleAction(disposition: .rejectProtectionSpace), match: RuleMatch(port: 70_000)) }
    }

    @Test func whatOnlyAPolicySaysIsInvalidPolicy() {
        #expect(throws: CountersignError(.invalidPolicy, "")) { try Self.validate(RuleAction(disposition: .rejectProtectionSpace), match: RuleMatch(methods: [])) }
        #expect(throws: CountersignError(.invalidPolicy, "")) { try Self.validate(RuleAction(disposition: .useCredential, blockSeconds: 600, maxBlockSeconds: 300)) }
        #expect(throws: CountersignError(.invalidPolicy, "")) { try Self.validate(RuleAction(disposition: .useCredential, credentialId: "not-a-uuid")) }
    }

    /// A pin whose last symbol sets bits padded base64 leaves unused decodes to nothing in the
    /// trust evaluator, so it never matched: saved, it answered every chain `pin_mismatch`.
    @Test func aPinTheEvaluatorCannotDecodeIsRefused() throws {
        func pinned(_ pin: String) -> RuleAction {
            RuleAction(disposition: .useCredential, trust: TrustSettings(pins: [pin]))
        }
        let canonical = String(repeating: "A", count: 42) + "E="
        try Self.validate(pinned(canonical))
        for pin in [String(repeating: "A", count: 42) + "B=", String(repeating: "A", count: 42) + "F="] {
            #expect(throws: CountersignError(.invalidPolicy, ""), "\(pin)") { try Self.validate(pinned(pin)) }
        }
    }
}

@Suite("Block schedules")
struct DecisionsBlockScheduleTests {
    @Test func aFixedBlock() {
        let schedule = BlockSchedule(seconds: 300, incrementSeconds: 0, maximumSeconds: 86_400)
        #expect(schedule.duration(afterEarlierBlocks: 0) == 300)
        #expect(schedule.duration(afterEarlierBlocks: 5) == 300)
    }

    @Test func growsPerEarlierBlockUpToTheMaximum() {
        let schedule = BlockSchedule(seconds: 60, incrementSeconds: 60, maximumSeconds: 200)
        #expect((0...5).map(schedule.duration(afterEarlierBlocks:)) == [60, 120, 180, 200, 200, 200])
        #expect(schedule.duration(afterEarlierBlocks: -3) == 60)
    }

    @Test func aMaximumBelowTheBaseIsTheBase() {
        #expect(BlockSchedule(seconds: 600, incrementSeconds: 10, maximumSeconds: 60).duration(afterEarlierBlocks: 4) == 600)
    }

    @Test func neverOverflows() {
        let schedule = BlockSchedule(seconds: 1, incrementSeconds: Int.max / 2, maximumSeconds: 1000)
        #expect(schedule.duration(afterEarlierBlocks: 3) == 1000)
        #expect(schedule.duration(afterEarlierBlocks: Int.max) == 1000)
        #expect(BlockSchedule(seconds: Int.max, incrementSeconds: 1, maximumSeconds: 5).duration(afterEarlierBlocks: 1) == Int.max)
    }

    @Test func ruleDefaults() {
        #expect(RuleAction(disposition: .useCredential).blockSchedule == .default)
        #expect(RuleAction(disposition: .useCredential, blockSeconds: 5, blockIncrementSeconds: 6, maxBlockSeconds: 7).blockSchedule
            == BlockSchedule(seconds: 5, incrementSeconds: 6, maximumSeconds: 7))
    }
}

@Suite("Policy validation")
struct DecisionsPolicyValidationTests {
    typealias F = EngineFixture

    func validate(_ rules: [PolicyRule], settings: PolicySettings = .init(), existing: Set<CredentialReference> = []) throws {
        try Policy(settings: settings, rules: rules).validate { existing.contains($0) }
    }

    @Test func aGoodPolicyPasses() throws {
        let id = UUID().uuidString.lowercased()
        try validate(
            [
                F.rule("a", match: RuleMatch(host: try HostPattern("*.example.com")), then: RuleAction(disposition: .useCredential, credentialId: id)),
                F.rule("b", then: RuleAction(disposition: .cancelAuthenticationChallenge)),
            ],
            existing: [.credential(id)]
        )
    }

    @Test func referencesToMissingCredentialsAreRefused() {
        let id = UUID().uuidString
        #expect(throws: CountersignError(.unknownCredentialReference, "")) {
            try validate([F.rule("a", then: RuleAction(disposition: .useCredential, credentialId: id))])
        }
        // Upper-case ids name the same credential as lower-case ones.
        #expect(throws: Never.self) {
            try validate([F.rule("a", then: RuleAction(disposition: .useCredential, credentialId: id.uppercased()))], existing: [.credential(id.lowercased())])
        }
    }

    @Test(arguments: [
        RuleAction(disposition: .useCredential, credentialId: "not-a-uuid"),
        RuleAction(disposition: .useCredential, maxFailures: 0),
        RuleAction(disposition: .useCredential, blockSeconds: 0),
        RuleAction(disposition: .useCredential, blockIncrementSeconds: -1),
        RuleAction(disposition: .useCredential, clientPersistences: [.forSession, .forSession]),
        RuleAction(disposition: .useCredential, blockedDisposition: .useCredential),
        RuleAction(disposition: .useCredential, failureDisposition: .useCredential),
        RuleAction(disposition: .useCredential, account: ""),
        RuleAction(disposition: .useCredential, blockSeconds: 1000, maxBlockSeconds: 10),
        RuleAction(disposition: .useCredential, maxBlockSeconds: 60),
        RuleAction(disposition: .useCredential, credentialId: UUID().uuidString, account: "svc"),
    ])
    func badActionsAreRefused(action: RuleAction) {
        #expect(throws: CountersignError.self) { try validate([F.rule("a", then: action)]) }
    }

    @Test func badRulesAreRefused() throws {
        #expect(throws: CountersignError(.invalidPolicy, "")) {
            try validate([F.rule("a", then: RuleAction(disposition: .rejectProtectionSpace)), F.rule("a", then: RuleAction(disposition: .rejectProtectionSpace))])
        }
        #expect(throws: CountersignError(.invalidPolicy, "")) { try validate([F.rule("has space", then: RuleAction(disposition: .rejectProtectionSpace))]) }
        #expect(throws: CountersignError(.invalidPolicy, "")) {
            try validate([F.rule("a", match: RuleMatch(methods: []), then: RuleAction(disposition: .rejectProtectionSpace))])
        }
        #expect(throws: CountersignError(.invalidPolicy, "")) {
            try validate([F.rule("a", match: RuleMatch(methods: [AuthenticationMethod(rawValue: "Bogus")]), then: RuleAction(disposition: .rejectProtectionSpace))])
        }
        #expect(throws: CountersignError(.invalidPolicy, "")) {
            try validate([F.rule("a", match: RuleMatch(methods: [.httpBasic, .ntlm, .httpBasic]), then: RuleAction(disposition: .rejectProtectionSpace))])
        }
        #expect(throws: CountersignError(.invalidField, "")) {
            try validate([F.rule("a", match: RuleMatch(port: 70000), then: RuleAction(disposition: .rejectProtectionSpace))])
        }
        #expect(throws: CountersignError(.invalidField, "")) { try validate([], settings: PolicySettings(maxSessionTTLSeconds: 0)) }
    }

    @Test func settingsThatContradictEachOtherAreRefused() throws {
        #expect(throws: CountersignError(.invalidPolicy, "")) { try validate([], settings: PolicySettings(defaultSessionTTLSeconds: 100, maxSessionTTLSeconds: 10)) }
        #expect(throws: CountersignError(.invalidPolicy, "")) { try validate([], settings: PolicySettings(defaultSessionTTLSeconds: 100_000)) }
        try validate([], settings: PolicySettings(defaultSessionTTLSeconds: 600, maxSessionTTLSeconds: 600))
        try validate([F.rule("a", then: RuleAction(disposition: .useCredential, blockSeconds: 60, maxBlockSeconds: 60))])
    }

    @Test func aRefusedGlobIsQuotedShortly() {
        let error = #expect(throws: CountersignError.self) { try HostPattern(String(repeating: "*", count: 100_000)) }
        #expect((error?.message.count ?? .max) < 200, "\(error?.message.count ?? 0) characters")
    }

    @Test func sessionLifetimesHonourTheMaximum() {
        #expect(PolicySettings().sessionTTLDefault == 3600)
        #expect(PolicySettings().sessionTTLMaximum == 86_400)
        #expect(PolicySettings(defaultSessionTTLSeconds: 7200, maxSessionTTLSeconds: 600).sessionTTLDefault == 600)
    }
}
