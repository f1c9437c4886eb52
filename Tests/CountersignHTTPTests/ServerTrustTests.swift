import CountersignCrypto
import CountersignTestSupport
import Foundation
import Testing

/// Server-trust challenges through the API: every answer, the checks that fail, pins, the
/// session's memory, and chains that are not chains.
@Suite struct ServerTrustTests {
    let pki: TestPKI

    init() async throws {
        pki = try await TestPKI.shared()
    }

    var rootAnchored: String { TLSRules.anchored([pki.rootCA.certificatePEM]) }

    @Test func trustedChainAnswersUseCredentialWithTheEvaluation() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(trust: rootAnchored))
            let session = try await api.session(tenant)
            let reply = try await api.trustChallenge(tenant, session: session, chain: pki.server.chainDER)
            #expect(reply.status == 200, "\(reply)")
            #expect(reply.string("disposition") == "useCredential")
            #expect(reply.string("scope") == "session")
            #expect(reply.string("persistence") == "forSession")
            #expect(reply.string("source") == "policy")
            let credential = try #require(reply.credential)
            #expect(credential["kind"] as? String == "serverTrust")
            let evaluation = try #require(credential["evaluation"] as? [String: Any])
            #expect(evaluation["trusted"] as? Bool == true)
            #expect(evaluation["failure"] is NSNull)
            #expect(
                evaluation["verifiedChain"] as? [String]
                    == [pki.server.certificate.subject, pki.intermediateCA.certificate.subject, pki.rootCA.certificate.subject]
            )
            #expect(reply.evaluation?["chainSha256"] as? String == evaluation["chainSha256"] as? String)
            #expect(reply.evaluation?["host"] as? String == "localhost")
        }
    }

    @Test func aRuleWithPersistenceNoneHasEveryChainEvaluated() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(trust: rootAnchored, then: #""persistence": "none""#))
            let session = try await api.session(tenant)
            for _ in 0..<2 {
                let reply = try await api.trustChallenge(tenant, session: session, chain: pki.server.chainDER)
                #expect(reply.string("disposition") == "useCredential", "\(reply)")
                #expect(reply.string("persistence") == "none")
                #expect(reply.string("source") == "policy")
            }
        }
    }

    @Test func theHostMayBeAnIPAddressOrMatchAWildcard() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(host: "*", trust: rootAnchored))
            let session = try await api.session(tenant)
            let ip = try await api.trustChallenge(tenant, session: session, host: "127.0.0.1", chain: pki.server.chainDER)
            #expect(ip.string("disposition") == "useCredential", "\(ip)")
            let wildcard = try await api.trustChallenge(tenant, session: session, host: "api.example.com", chain: pki.wildcard.chainDER)
            #expect(wildcard.string("disposition") == "useCredential", "\(wildcard)")
            let deeper = try await api.trustChallenge(tenant, session: session, host: "a.b.example.com", chain: pki.wildcard.chainDER)
            #expect(deeper.string("disposition") == "cancelAuthenticationChallenge")
            #expect(deeper.trustFailureCode == "hostname_mismatch")
        }
    }

    /// Each failed check with its stable code; the default failure disposition is cancel.
    @Test func untrustedChainsAnswerTheFailureDispositionWithTheFailedCheck() async throws {
        let cases: [(String, TestPKI.Leaf, String, String)] = [
            ("unrelated root", pki.otherRootServer, "localhost", "untrusted_root"),
            ("self-signed", pki.selfSigned, "localhost", "untrusted_root"),
            ("expired", pki.expired, "localhost", "expired"),
            ("not yet valid", pki.notYetValid, "localhost", "not_yet_valid"),
            ("other name", pki.otherName, "localhost", "hostname_mismatch"),
            ("client auth only", pki.clientAuthOnly, "localhost", "bad_key_usage"),
        ]
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(trust: rootAnchored))
            let session = try await api.session(tenant)
            for (name, leaf, host, code) in cases {
                let reply = try await api.trustChallenge(tenant, session: session, host: host, chain: leaf.chainDER)
                #expect(reply.status == 200, "\(name): \(reply)")
                #expect(reply.string("disposition") == "cancelAuthenticationChallenge", "\(name)")
                #expect(reply.credential == nil, "\(name)")
                #expect(reply.trustFailureCode == code, "\(name): \(reply)")
                #expect(reply.evaluation?["trusted"] as? Bool == false)
                #expect(reply.string("reason")?.contains(code) == true, "\(name)")
            }
            // Untrusted answers are recorded, never remembered: the same chain is evaluated again.
            let again = try await api.trustChallenge(tenant, session: session, chain: pki.expired.chainDER)
            #expect(again.string("source") == "policy")
            #expect(try await api.decisions(tenant, session: session).count == cases.count + 1)
        }
    }

    @Test(arguments: ["rejectProtectionSpace", "performDefaultHandling", "cancelAuthenticationChallenge"])
    func theRulesFailureDispositionAnswers(disposition: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(trust: rootAnchored, then: #""failureDisposition": "\#(disposition)""#))
            let session = try await api.session(tenant)
            let reply = try await api.trustChallenge(tenant, session: session, chain: pki.otherRootServer.chainDER)
            #expect(reply.string("disposition") == disposition)
            #expect(reply.trustFailureCode == "untrusted_root")
        }
    }

    @Test func allowExpiredExcusesOnlyTheDates() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let trust = TLSRules.anchored([pki.rootCA.certificatePEM], allowExpired: true)
            try await api.policy(tenant, rules: TLSRules.serverTrust(host: "*", trust: trust))
            let session = try await api.session(tenant)
            let expired = try await api.trustChallenge(tenant, session: session, chain: pki.expired.chainDER)
            #expect(expired.string("disposition") == "useCredential", "\(expired)")
            let wrongHost = try await api.trustChallenge(tenant, session: session, host: "elsewhere.example.net", chain: pki.expired.chainDER)
            #expect(wrongHost.trustFailureCode == "hostname_mismatch")
        }
    }

    /// The session answers a trusted chain from memory until the first notAfter of its verified
    /// path, which the evaluation says; dates a rule excuses end nothing.
    @Test func aTrustedAnswerSaysUntilWhenTheSessionRemembersIt() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(host: "*", trust: TLSRules.anchored([pki.rootCA.certificatePEM])))
            let session = try await api.session(tenant)
            let reply = try await api.trustChallenge(tenant, session: session, chain: pki.server.chainDER)
            #expect(reply.string("disposition") == "useCredential", "\(reply)")
            let until = try #require(reply.evaluation?["validUntil"] as? String, "\(reply)")
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let path = [pki.server.certificate, pki.intermediateCA.certificate, pki.rootCA.certificate]
            #expect(formatter.date(from: until) == path.map(\.notAfter).min())

            let excused = TLSRules.anchored([pki.rootCA.certificatePEM], allowExpired: true)
            try await api.policy(tenant, rules: TLSRules.serverTrust(host: "*", trust: excused))
            let other = try await api.session(tenant)
            let expired = try await api.trustChallenge(tenant, session: other, chain: pki.expired.chainDER)
            #expect(expired.string("disposition") == "useCredential", "\(expired)")
            #expect(expired.evaluation?["validUntil"] is NSNull)
        }
    }

    @Test func noRuleForTheHostMeansDefaultHandling() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(host: "other.example.com", trust: rootAnchored))
            let session = try await api.session(tenant)
            let reply = try await api.trustChallenge(tenant, session: session, chain: pki.server.chainDER)
            #expect(reply.string("disposition") == "performDefaultHandling")
            #expect(reply.string("source") == "noMatchingRule")
            #expect(reply.credential == nil)
            #expect(reply.json["evaluation"] is NSNull)
        }
    }

    @Test func systemAnchorsDoNotTrustATestCAAndExtraAnchorsAddToThem() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(
                tenant,
                rules: """
                    [{"id": "default", "match": {"host": "localhost"}, "then": {"disposition": "useCredential"}},
                     {"id": "extra", "match": {"host": "127.0.0.1"},
                      "then": {"disposition": "useCredential", "trust": {"anchors": [\(json(pki.rootCA.certificatePEM))]}}}]
                    """
            )
            let session = try await api.session(tenant)
            let system = try await api.trustChallenge(tenant, session: session, chain: pki.server.chainDER)
            #expect(system.trustFailureCode == "untrusted_root", "\(system)")
            let extra = try await api.trustChallenge(tenant, session: session, host: "127.0.0.1", chain: pki.server.chainDER)
            #expect(extra.string("disposition") == "useCredential", "\(extra)")
        }
    }

    @Test func aPinMayMatchTheLeafOrTheIntermediate() async throws {
        try await TestService.run { api in
            for pinned in [pki.server.certificate, pki.intermediateCA.certificate] {
                let tenant = try await api.tenant()
                let trust = TLSRules.anchored([pki.rootCA.certificatePEM], pins: [pki.otherRootCA.certificate.spkiSHA256Base64, pinned.spkiSHA256Base64])
                try await api.policy(tenant, rules: TLSRules.serverTrust(trust: trust))
                let session = try await api.session(tenant)
                let reply = try await api.trustChallenge(tenant, session: session, chain: pki.server.chainDER)
                #expect(reply.string("disposition") == "useCredential", "\(reply)")
                #expect(reply.evaluation?["matchedPin"] as? String == pinned.spkiSHA256Base64)
                #expect(reply.string("reason")?.contains("pin") == true)
            }
        }
    }

    @Test func aPinMismatchRefusesAnOtherwiseValidChain() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let trust = TLSRules.anchored([pki.rootCA.certificatePEM], pins: [pki.otherRootServer.certificate.spkiSHA256Base64])
            try await api.policy(tenant, rules: TLSRules.serverTrust(trust: trust))
            let session = try await api.session(tenant)
            let reply = try await api.trustChallenge(tenant, session: session, chain: pki.server.chainDER)
            #expect(reply.string("disposition") == "cancelAuthenticationChallenge")
            #expect(reply.trustFailureCode == "pin_mismatch")
            // The chain itself verified: the path is reported, only the pin failed.
            #expect((reply.evaluation?["verifiedChain"] as? [String])?.count == 3)
            #expect(reply.evaluation?["matchedPin"] is NSNull)
        }
    }

    @Test func aTrustedChainIsAnsweredFromTheSessionAndAnotherChainIsEvaluatedAgain() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(host: "*", trust: rootAnchored))
            let session = try await api.session(tenant)
            let first = try await api.trustChallenge(tenant, session: session, chain: pki.server.chainDER, taskId: "a")
            #expect(first.string("source") == "policy")
            let firstEvaluatedAt = try #require(first.evaluation?["evaluatedAt"] as? String)

            let second = try await api.trustChallenge(tenant, session: session, chain: pki.server.chainDER, taskId: "b")
            #expect(second.string("disposition") == "useCredential")
            #expect(second.string("source") == "session", "\(second)")
            #expect(second.credential?["kind"] as? String == "serverTrust")
            #expect(second.evaluation?["evaluatedAt"] as? String == firstEvaluatedAt, "the remembered evaluation, not a new one")

            // The same host and port with another chain (a server that changed certificates).
            let otherChain = [pki.server.certificate.derBytes]
            let third = try await api.trustChallenge(tenant, session: session, chain: otherChain + [pki.intermediateCA.certificateDER, pki.rootCA.certificateDER], taskId: "c")
            #expect(third.string("source") == "policy", "\(third)")
            // Another port is another protection space.
            let otherPort = try await api.trustChallenge(tenant, session: session, port: 8443, chain: pki.server.chainDER, taskId: "d")
            #expect(otherPort.string("source") == "policy")
            // Another session remembers nothing yet.
            let fresh = try await api.session(tenant, clientId: "device-2")
            let inFresh = try await api.trustChallenge(tenant, session: fresh, chain: pki.server.chainDER)
            #expect(inFresh.string("source") == "policy")
            // Every answer was recorded, the remembered ones too.
            #expect(try await api.decisions(tenant, session: session).count == 4)
        }
    }

    @Test func garbageChainsAre4xxAndNotRecorded() async throws {
        let server = pki.server.certificateDER
        let truncated = Data(server.prefix(server.count - 10)).base64EncodedString()
        let trailing = Data(server + [0, 0]).base64EncodedString()
        let huge = Data([0x30, 0x83, 0x01, 0x00, 0x00] + [UInt8](repeating: 0x41, count: 65_536)).base64EncodedString()
        let good = Data(server).base64EncodedString()
        let cases: [(String, [String], String)] = [
            ("not base64", ["this is not base64!"], "malformed_certificate"),
            ("not DER", [Data("hello, world".utf8).base64EncodedString()], "malformed_certificate"),
            ("truncated", [truncated], "malformed_certificate"),
            ("trailing bytes", [trailing], "malformed_certificate"),
            ("second certificate garbage", [good, "AAAA"], "malformed_certificate"),
            ("too many", Array(repeating: good, count: 11), "chain_too_long"),
            ("too large", [huge], "certificate_too_large"),
        ]
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(trust: rootAnchored))
            let session = try await api.session(tenant)
            for (name, chain, code) in cases {
                let reply = try await api.trustChallenge(tenant, session: session, encodedChain: chain)
                #expect(reply.status == 400, "\(name): \(reply)")
                #expect(reply.errorCode == code, "\(name): \(reply)")
            }
            // A rule that must evaluate needs the chain; without a rule, none is needed.
            let missing = try await api.trustChallenge(tenant, session: session, encodedChain: nil)
            #expect(missing.status == 400)
            #expect(missing.errorCode == "server_trust_missing")
            let empty = try await api.trustChallenge(tenant, session: session, encodedChain: [])
            #expect(empty.errorCode == "server_trust_missing")
            let elsewhere = try await api.trustChallenge(tenant, session: session, host: "elsewhere.example.net", encodedChain: nil)
            #expect(elsewhere.string("disposition") == "performDefaultHandling")
            // Malformed TLS parts are refused whatever the method, even one that does not use them.
            let basic = #"{"taskId": "t", "protectionSpace": {"host": "localhost", "port": 443, "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic", "#
            for (extra, code) in [
                (#""serverTrust": {"certificates": ["not base64!"]}}}"#, "malformed_certificate"),
                (#""distinguishedNames": ["%%%"]}}"#, "invalid_distinguished_name"),
            ] {
                let reply = try await api.call(.post, "/v1/sessions/\(session)/challenges", key: tenant.clientKey, json: basic + extra)
                #expect(reply.errorCode == code, "\(reply)")
            }
            #expect(try await api.decisions(tenant, session: session).count == 1, "only the answered challenge is recorded")
        }
    }

    @Test func policiesRefuseAnchorsThatAreNotCertificates() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let current = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
            let reply = try await api.call(
                .put, "/v1/policy", key: tenant.adminKey,
                json: #"{"version": \#(current.json["version"] as? Int ?? 0), "rules": \#(TLSRules.serverTrust(trust: #"{"anchors": ["not a certificate"]}"#))}"#
            )
            #expect(reply.status == 400)
            #expect(reply.errorCode == "invalid_policy")
            let pins = try await api.call(
                .put, "/v1/policy", key: tenant.adminKey,
                json: #"{"version": \#(current.json["version"] as? Int ?? 0), "rules": \#(TLSRules.serverTrust(trust: #"{"pins": ["AAAA"]}"#))}"#
            )
            #expect(pins.errorCode == "invalid_policy")
        }
    }

    /// An anchor pasted from a combined key and chain file: the key was skipped by the parser but
    /// the text saved as it came, so GET /v1/policy and every policy version showed the private key.
    @Test func policiesRefuseAnchorsThatCarryAPrivateKey() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let keyLines = pki.server.keyPEM.split(separator: "\n")
            let keyLine = String(keyLines[1])
            // OpenSSL reads none of the last three as a block, and would skip them as text.
            let indented = keyLines.map { "  \($0)\n" }.joined()
            let tabbed = keyLines.map { "\t\($0)\n" }.joined()
            let lowerCased = keyLines.map { $0.hasPrefix("-----") ? $0.lowercased() : String($0) }.joined(separator: "\n") + "\n"
            let anchors = [pki.server.keyPEM + pki.rootCA.certificatePEM, pki.rootCA.certificatePEM + pki.server.keyPEM]
                + [indented, tabbed, lowerCased].map { pki.rootCA.certificatePEM + $0 }
            for anchor in anchors {
                let current = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
                let trust = TLSRules.anchored([anchor])
                let reply = try await api.call(
                    .put, "/v1/policy", key: tenant.adminKey,
                    json: #"{"version": \#(current.json["version"] as? Int ?? 0), "rules": \#(TLSRules.serverTrust(trust: trust))}"#
                )
                #expect(reply.status == 400, "\(reply)")
                #expect(reply.errorCode == "invalid_policy")
                #expect(!String(decoding: reply.body, as: UTF8.self).contains(keyLine), "the error names the block, never its contents")
            }
            let stored = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
            #expect(!String(decoding: stored.body, as: UTF8.self).contains(keyLine))
        }
    }

    @Test func explainEvaluatesWithoutRecording() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(trust: rootAnchored))
            let challenge: [String: Any] = [
                "taskId": "t",
                "protectionSpace": [
                    "host": "localhost", "port": 443, "authenticationMethod": "NSURLAuthenticationMethodServerTrust",
                    "serverTrust": ["certificates": pki.expired.chainDER.map { Data($0).base64EncodedString() }],
                ],
            ]
            let body = String(decoding: try JSONSerialization.data(withJSONObject: ["challenge": challenge]), as: UTF8.self)
            let reply = try await api.call(.post, "/v1/policy/explain", key: tenant.adminKey, json: body)
            #expect(reply.status == 200, "\(reply)")
            #expect(reply.string("disposition") == "cancelAuthenticationChallenge")
            #expect(reply.trustFailureCode == "expired")
        }
    }

    private func json(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast().description
    }
}
