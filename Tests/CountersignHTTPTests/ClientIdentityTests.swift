import CountersignCrypto
import CountersignService
import CountersignTestSupport
import Foundation
import Testing

/// Client identities: the admin API, selection on client-certificate challenges, release as
/// PKCS#12, and rejection counting.
@Suite struct ClientIdentityTests {
    let pki: TestPKI

    init() async throws {
        pki = try await TestPKI.shared()
    }

    // MARK: - Admin API

    @Test func uploadListGetAndDeleteNeverShowTheKey() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let upload = try await api.call(
                .post, "/v1/identities", key: tenant.adminKey,
                json: ["pkcs12": Data(pki.clientA.pkcs12).base64EncodedString(), "password": pki.clientA.password, "label": "fleet A"]
            )
            #expect(upload.status == 201, "\(upload)")
            let certificate = pki.clientA.certificate
            #expect(upload.string("subject") == certificate.subject)
            #expect(upload.string("issuer") == certificate.issuer)
            #expect(upload.string("serialNumber") == certificate.serialNumberHex)
            #expect(upload.string("sha256Fingerprint") == certificate.sha256Fingerprint)
            #expect(upload.string("keyAlgorithm") == "EC-prime256v1")
            #expect(upload.string("state") == "valid")
            #expect(upload.string("label") == "fleet A")
            #expect(upload.json["chainSubjects"] as? [String] == [pki.clientCAA.certificate.subject])
            let id = try #require(upload.string("id"))

            let pem = try await api.call(
                .post, "/v1/identities", key: tenant.adminKey,
                json: ["privateKey": pki.clientB.keyPEM, "certificateChain": pki.clientB.chainPEM]
            )
            #expect(pem.status == 201, "\(pem)")
            #expect(pem.string("keyAlgorithm") == "RSA-2048")
            let expired = try await api.identity(tenant, pki.expiredClient)

            let list = try await api.call(.get, "/v1/identities", key: tenant.adminKey)
            let identities = try #require(list.json["identities"] as? [[String: Any]])
            #expect(identities.count == 3)
            #expect(identities.last?["id"] as? String == expired, "valid longest first: the expired one last")
            #expect(identities.last?["state"] as? String == "expired")
            let paged = try await api.allPages("/v1/identities", "identities", key: tenant.adminKey, limit: 1)
            #expect(paged.pages == 3)
            #expect(paged.entries.compactMap { $0["id"] as? String } == identities.compactMap { $0["id"] as? String }, "pages keep the order")
            for reply in [upload, pem, list] {
                let text = String(decoding: reply.body, as: UTF8.self)
                #expect(!text.contains("PRIVATE KEY") && !text.contains("pkcs12") && !text.contains(pki.clientA.password))
            }

            let one = try await api.call(.get, "/v1/identities/\(id)", key: tenant.adminKey)
            #expect(one.string("sha256Fingerprint") == certificate.sha256Fingerprint)
            // Identities are not password credentials.
            #expect(try await api.call(.get, "/v1/credentials/\(id)", key: tenant.adminKey).status == 404)
            #expect((try await api.call(.get, "/v1/credentials", key: tenant.adminKey).json["credentials"] as? [Any])?.isEmpty == true)

            #expect(try await api.call(.delete, "/v1/identities/\(id)", key: tenant.adminKey).status == 204)
            #expect(try await api.call(.get, "/v1/identities/\(id)", key: tenant.adminKey).status == 404)
            #expect(try await api.call(.delete, "/v1/identities/\(id)", key: tenant.adminKey).status == 404)
            // Clients may not manage identities; other tenants do not see them.
            #expect(try await api.call(.get, "/v1/identities", key: tenant.clientKey).status == 403)
            let other = try await api.tenant()
            #expect(try await api.call(.get, "/v1/identities/\(expired)", key: other.adminKey).status == 404)
        }
    }

    @Test func badUploadsAreRefusedWithTheirCodes() async throws {
        let p12 = Data(pki.clientA.pkcs12).base64EncodedString()
        let cases: [(String, [String: String], Int, String)] = [
            ("wrong password", ["pkcs12": p12, "password": "wrong"], 400, "pkcs12_bad_password"),
            ("not base64", ["pkcs12": "%%%", "password": "x"], 400, "malformed_pkcs12"),
            ("not PKCS#12", ["pkcs12": Data("garbage".utf8).base64EncodedString(), "password": "x"], 400, "malformed_pkcs12"),
            ("no password", ["pkcs12": p12], 400, "missing_field"),
            ("key of another certificate", ["privateKey": pki.clientA.keyPEM, "certificateChain": pki.clientB.chainPEM], 400, "key_certificate_mismatch"),
            ("not a key", ["privateKey": "nope", "certificateChain": pki.clientB.chainPEM], 400, "malformed_private_key"),
            ("not a chain", ["privateKey": pki.clientB.keyPEM, "certificateChain": "nope"], 400, "malformed_certificate"),
            (
                "a stranger in the chain",
                ["privateKey": pki.clientB.keyPEM, "certificateChain": pki.clientB.chainPEM + pki.clientCAA.certificatePEM], 400, "chain_not_linked"
            ),
            ("neither", ["label": "x"], 400, "invalid_identity"),
            ("both", ["pkcs12": p12, "password": "x", "privateKey": pki.clientA.keyPEM, "certificateChain": pki.clientA.chainPEM], 400, "invalid_identity"),
            ("key without chain", ["privateKey": pki.clientA.keyPEM], 400, "invalid_identity"),
        ]
        try await TestService.run { api in
            let tenant = try await api.tenant()
            for (name, body, status, code) in cases {
                let reply = try await api.call(.post, "/v1/identities", key: tenant.adminKey, json: body)
                #expect(reply.status == status, "\(name): \(reply)")
                #expect(reply.errorCode == code, "\(name): \(reply)")
                #expect(!String(decoding: reply.body, as: UTF8.self).contains("wrong"), "\(name): the password is never echoed")
            }
            _ = try await api.identity(tenant, pki.clientA)
            let again = try await api.call(.post, "/v1/identities", key: tenant.adminKey, json: ["privateKey": pki.clientA.keyPEM, "certificateChain": pki.clientA.chainPEM])
            #expect(again.status == 409)
            #expect(again.errorCode == "identity_exists")
            #expect((try await api.call(.get, "/v1/identities", key: tenant.adminKey).json["identities"] as? [Any])?.count == 1)
        }
    }

    /// The subject keys the identity's row, and a key index entry holds at most 2,704 bytes: a
    /// subject of some thousands of characters (60 random OUs) is refused with a code, not a 500.
    @Test func aSubjectTooLongToKeyTheIdentityIsRefusedWithACode() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-long-subject-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let units = try (0..<60).map { _ in "/OU=" + (try SecureRandom.bytes(30).hexString) }
        try TestPKI.runOpenSSL([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-noenc", "-keyout", directory + "/key.pem",
            "-out", directory + "/certificate.pem", "-days", "30", "-subj", "/CN=long" + units.joined(),
        ])
        let body = [
            "privateKey": try String(contentsOfFile: directory + "/key.pem", encoding: .utf8),
            "certificateChain": try String(contentsOfFile: directory + "/certificate.pem", encoding: .utf8),
        ]
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let reply = try await api.call(.post, "/v1/identities", key: tenant.adminKey, json: body)
            #expect(reply.status == 400, "\(reply)")
            #expect(reply.errorCode == "invalid_identity", "\(reply)")
            #expect((try await api.call(.get, "/v1/identities", key: tenant.adminKey).json["identities"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func rulesNameIdentitiesAsIdentitiesAndDeletionWaitsForThePolicy() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.identity(tenant, pki.clientA)
            let password = try await api.credential(tenant)
            let current = { try await api.call(.get, "/v1/policy", key: tenant.adminKey).json["version"] as? Int ?? 0 }
            for (rules, name) in [
                (TLSRules.clientCertificate(then: #""identityId": "\#(UUID().uuidString.lowercased())""#), "unknown identity"),
                (TLSRules.clientCertificate(then: #""identityId": "\#(password)""#), "a password named as identity"),
                (TLSRules.clientCertificate(then: #""credentialId": "\#(id)""#), "an identity named as credential"),
            ] {
                let reply = try await api.call(.put, "/v1/policy", key: tenant.adminKey, json: #"{"version": \#(try await current()), "rules": \#(rules)}"#)
                #expect(reply.status == 400, "\(name): \(reply)")
                #expect(reply.errorCode == "unknown_credential_reference", "\(name)")
            }
            try await api.policy(tenant, rules: TLSRules.clientCertificate(then: #""identityId": "\#(id)""#))
            let refused = try await api.call(.delete, "/v1/identities/\(id)", key: tenant.adminKey)
            #expect(refused.status == 409)
            #expect(refused.errorCode == "identity_in_use")
            try await api.policy(tenant, rules: "[]")
            #expect(try await api.call(.delete, "/v1/identities/\(id)", key: tenant.adminKey).status == 204)
        }
    }

    // MARK: - Selection

    @Test func theServersDistinguishedNamesChooseTheIdentity() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let a = try await api.identity(tenant, pki.clientA)
            let b = try await api.identity(tenant, pki.clientB)
            try await api.policy(tenant, rules: TLSRules.clientCertificate(then: #""persistence": "none""#))
            let session = try await api.session(tenant)

            let forB = try await api.certificateChallenge(tenant, session: session, names: [pki.clientCAB.subjectDER])
            #expect(forB.string("disposition") == "useCredential", "\(forB)")
            #expect(forB.credential?["identityId"] as? String == b)
            let forA = try await api.certificateChallenge(tenant, session: session, names: [pki.rootCA.subjectDER, pki.clientCAA.subjectDER])
            #expect(forA.credential?["identityId"] as? String == a)
            let any = try await api.certificateChallenge(tenant, session: session, names: nil)
            #expect([a, b].contains(any.credential?["identityId"] as? String ?? ""), "\(any)")
            let none = try await api.certificateChallenge(tenant, session: session, names: [pki.rootCA.subjectDER, pki.otherRootCA.subjectDER])
            #expect(none.string("disposition") == "cancelAuthenticationChallenge")
            #expect(none.credential == nil)
            #expect(none.string("reason")?.contains("no valid client identity") == true)
        }
    }

    @Test func anExplicitIdentityIsReleasedWhateverTheNamesAndTheFailureDispositionAnswersMisfits() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let a = try await api.identity(tenant, pki.clientA)
            try await api.policy(
                tenant,
                rules: """
                    [{"id": "named", "match": {"host": "named.example.com"}, "then": {"disposition": "useCredential", "identityId": "\(a)"}},
                     {"id": "picky", "match": {"host": "picky.example.com"},
                      "then": {"disposition": "useCredential", "failureDisposition": "rejectProtectionSpace"}}]
                    """
            )
            let session = try await api.session(tenant)
            let named = try await api.certificateChallenge(tenant, session: session, host: "named.example.com", names: [pki.clientCAB.subjectDER])
            #expect(named.credential?["identityId"] as? String == a, "\(named)")
            let picky = try await api.certificateChallenge(tenant, session: session, host: "picky.example.com", names: [pki.clientCAB.subjectDER])
            #expect(picky.string("disposition") == "rejectProtectionSpace")
        }
    }

    @Test func expiredIdentitiesAreNeverReleased() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let expired = try await api.identity(tenant, pki.expiredClient)
            try await api.policy(
                tenant,
                rules: """
                    [{"id": "named", "match": {"host": "named.example.com"}, "then": {"disposition": "useCredential", "identityId": "\(expired)"}},
                     {"id": "any", "match": {"methods": ["NSURLAuthenticationMethodClientCertificate"]}, "then": {"disposition": "useCredential"}}]
                    """
            )
            let session = try await api.session(tenant)
            let named = try await api.certificateChallenge(tenant, session: session, host: "named.example.com", names: nil)
            #expect(named.string("disposition") == "cancelAuthenticationChallenge", "\(named)")
            #expect(named.credential == nil)
            let any = try await api.certificateChallenge(tenant, session: session, names: [pki.clientCAA.subjectDER])
            #expect(any.string("disposition") == "cancelAuthenticationChallenge")
            // A valid identity from the same CA is chosen over the expired one.
            let a = try await api.identity(tenant, pki.clientA)
            let withValid = try await api.certificateChallenge(tenant, session: session, names: [pki.clientCAA.subjectDER])
            #expect(withValid.credential?["identityId"] as? String == a)
        }
    }

    /// Decisions judge an identity's validity by the database's clock; the listing judged it by
    /// this instance's. With the database's clock two days behind, an identity issued today is not
    /// yet valid to every decision, and the listing called it valid.
    @Test func anIdentitysStateIsToldByTheClockDecisionsJudgeItBy() async throws {
        try await ClockSkewTests.runWithDatabaseClock(shiftedBySeconds: -2 * 86_400) { api in
            let tenant = try await api.tenant()
            let uploaded = try await api.call(
                .post, "/v1/identities", key: tenant.adminKey,
                json: ["pkcs12": Data(pki.clientA.pkcs12).base64EncodedString(), "password": pki.clientA.password]
            )
            #expect(uploaded.status == 201, "\(uploaded)")
            #expect(uploaded.string("state") == "notYetValid", "\(uploaded)")
            let id = try #require(uploaded.string("id"))
            let one = try await api.call(.get, "/v1/identities/\(id)", key: tenant.adminKey)
            #expect(one.string("state") == "notYetValid", "\(one)")
            let list = try await api.call(.get, "/v1/identities", key: tenant.adminKey)
            #expect((list.json["identities"] as? [[String: Any]])?.first?["state"] as? String == "notYetValid", "\(list)")

            try await api.policy(tenant, rules: TLSRules.clientCertificate())
            let session = try await api.session(tenant)
            let challenge = try await api.certificateChallenge(tenant, session: session, names: nil)
            #expect(challenge.string("disposition") == "cancelAuthenticationChallenge", "\(challenge)")
            #expect(challenge.string("reason")?.contains("not yet valid") == true)
        }
    }

    @Test func malformedDistinguishedNamesAre4xxAndNotRecorded() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.identity(tenant, pki.clientA)
            try await api.policy(tenant, rules: TLSRules.clientCertificate())
            let session = try await api.session(tenant)
            for names in [[Array("not a name".utf8)], [pki.clientCAA.subjectDER + [0]], Array(repeating: pki.clientCAA.subjectDER, count: 1001)] {
                let reply = try await api.certificateChallenge(tenant, session: session, names: names)
                #expect(reply.status == 400, "\(reply)")
                #expect(reply.errorCode == "invalid_distinguished_name")
            }
            // A Windows server's whole trusted-root store is some hundreds of names.
            let rootStore = try await api.certificateChallenge(
                tenant, session: try await api.session(tenant, clientId: "device-2"),
                names: Array(repeating: pki.otherRootCA.subjectDER, count: 599) + [pki.clientCAA.subjectDER]
            )
            #expect(rootStore.string("disposition") == "useCredential", "\(rootStore)")
            let body = #"{"taskId": "t", "protectionSpace": {"host": "mtls.example.com", "port": 443, "authenticationMethod": "NSURLAuthenticationMethodClientCertificate", "distinguishedNames": ["%%%"]}}"#
            let notBase64 = try await api.call(.post, "/v1/sessions/\(session)/challenges", key: tenant.clientKey, json: body)
            #expect(notBase64.errorCode == "invalid_distinguished_name")
            #expect(try await api.decisions(tenant, session: session).isEmpty)
        }
    }

    @Test func explainShowsTheIdentityButNeverItsKey() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let b = try await api.identity(tenant, pki.clientB)
            try await api.policy(tenant, rules: TLSRules.clientCertificate())
            let challenge: [String: Any] = [
                "taskId": "t",
                "protectionSpace": [
                    "host": "mtls.example.com", "port": 443, "authenticationMethod": "NSURLAuthenticationMethodClientCertificate",
                    "distinguishedNames": [Data(pki.clientCAB.subjectDER).base64EncodedString()],
                ],
            ]
            let body = String(decoding: try JSONSerialization.data(withJSONObject: ["challenge": challenge]), as: UTF8.self)
            let reply = try await api.call(.post, "/v1/policy/explain", key: tenant.adminKey, json: body)
            #expect(reply.status == 200, "\(reply)")
            #expect(reply.string("disposition") == "useCredential")
            #expect((reply.json["identity"] as? [String: Any])?["id"] as? String == b)
            #expect(reply.json["credential"] is NSNull)
            #expect(!String(decoding: reply.body, as: UTF8.self).contains("pkcs12"))
        }
    }

    // MARK: - Release

    @Test func theReleasedPKCS12OpensWithItsOneTimePassphraseOnly() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let b = try await api.identity(tenant, pki.clientB)
            try await api.policy(tenant, rules: TLSRules.clientCertificate(then: #""persistence": "none""#))
            let session = try await api.session(tenant)
            var passphrases: Set<String> = []
            for task in ["one", "two"] {
                let reply = try await api.certificateChallenge(tenant, session: session, names: [pki.clientCAB.subjectDER], taskId: task)
                let credential = try #require(reply.credential, "\(reply)")
                #expect(credential["kind"] as? String == "clientIdentity")
                #expect(credential["format"] as? String == "pkcs12")
                #expect(credential["identityId"] as? String == b)
                #expect(credential["sha256Fingerprint"] as? String == pki.clientB.certificate.sha256Fingerprint)
                #expect(reply.string("persistence") == "none")
                #expect(reply.string("source") == "policy", "persistence none is remembered nowhere")
                let passphrase = try #require(credential["passphrase"] as? String)
                let pkcs12 = try #require((credential["pkcs12"] as? String).flatMap { Data(base64Encoded: $0) })
                passphrases.insert(passphrase)
                let opened = try ClientIdentity(pkcs12: [UInt8](pkcs12), password: passphrase)
                #expect(opened.certificate == pki.clientB.certificate)
                #expect(opened.chain == [pki.clientCAB.certificate])
                #expect(throws: CryptoError(.pkcs12BadPassword, "")) { try ClientIdentity(pkcs12: [UInt8](pkcs12), password: pki.clientB.password) }
                #expect(!String(decoding: reply.body, as: UTF8.self).contains("PRIVATE KEY"))
            }
            #expect(passphrases.count == 2, "each release has its own passphrase")
        }
    }

    @Test func forSessionIdentitiesAreAnsweredFromTheSessionWithAFreshPassphrase() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let a = try await api.identity(tenant, pki.clientA)
            try await api.policy(tenant, rules: TLSRules.clientCertificate())
            let session = try await api.session(tenant)
            let first = try await api.certificateChallenge(tenant, session: session, names: [pki.clientCAA.subjectDER], taskId: "one")
            #expect(first.string("persistence") == "forSession")
            let second = try await api.certificateChallenge(tenant, session: session, names: [pki.clientCAA.subjectDER], taskId: "two")
            #expect(second.string("source") == "session", "\(second)")
            #expect(second.credential?["identityId"] as? String == a)
            #expect(second.credential?["passphrase"] as? String != first.credential?["passphrase"] as? String)
        }
    }

    @Test func aRememberedIdentityAnswersOnlyServersNamingTheSameCAs() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let a = try await api.identity(tenant, pki.clientA)
            let b = try await api.identity(tenant, pki.clientB)
            try await api.policy(tenant, rules: TLSRules.clientCertificate())
            let session = try await api.session(tenant)
            let forA = try await api.certificateChallenge(tenant, session: session, names: [pki.clientCAA.subjectDER], taskId: "one")
            #expect(forA.credential?["identityId"] as? String == a)
            #expect(forA.string("persistence") == "forSession")

            // A server that accepts only B's CA is not given the identity remembered for A's.
            let forB = try await api.certificateChallenge(tenant, session: session, names: [pki.clientCAB.subjectDER], taskId: "two")
            #expect(forB.credential?["identityId"] as? String == b, "\(forB)")
            #expect(forB.string("source") == "policy")
            // After an answer to a server naming no CAs, one naming CAs no identity has is answered
            // too, not raced against what the session remembers.
            let other = try await api.session(tenant)
            let unnamed = try await api.certificateChallenge(tenant, session: other, names: nil, taskId: "four")
            #expect(unnamed.string("disposition") == "useCredential", "\(unnamed)")
            let nobody = try await api.certificateChallenge(tenant, session: other, names: [pki.otherRootCA.subjectDER], taskId: "five")
            #expect(nobody.status == 200, "\(nobody)")
            #expect(nobody.string("disposition") == "cancelAuthenticationChallenge")
            // Each is remembered for the CAs it answered.
            for (names, identity) in [(pki.clientCAA.subjectDER, a), (pki.clientCAB.subjectDER, b)] {
                let again = try await api.certificateChallenge(tenant, session: session, names: [names], taskId: "three")
                #expect(again.string("source") == "session", "\(again)")
                #expect(again.credential?["identityId"] as? String == identity)
            }
        }
    }

    @Test func aRememberedIdentityAnswersTheSameCAsInAnyOrder() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let a = try await api.identity(tenant, pki.clientA)
            try await api.policy(tenant, rules: TLSRules.clientCertificate())
            let session = try await api.session(tenant)
            let names = [pki.clientCAA.subjectDER, pki.clientCAB.subjectDER, pki.otherRootCA.subjectDER]
            let first = try await api.certificateChallenge(tenant, session: session, names: names, taskId: "one")
            #expect(first.credential?["identityId"] as? String == a, "\(first)")
            #expect(first.string("persistence") == "forSession")
            // The server's list is a set: another connection may send it in another order, or twice over.
            for (task, reordered) in [("two", names.reversed()), ("three", [names[1], names[2], names[0], names[1]])] {
                let again = try await api.certificateChallenge(tenant, session: session, names: Array(reordered), taskId: task)
                #expect(again.string("source") == "session", "\(task): \(again)")
                #expect(again.credential?["identityId"] as? String == a)
            }
        }
    }

    @Test func rejectedIdentitiesAreCountedAndBlocked() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let a = try await api.identity(tenant, pki.clientA)
            try await api.policy(tenant, rules: TLSRules.clientCertificate(then: #""maxFailures": 2, "persistence": "none""#))
            let session = try await api.session(tenant)
            for attempt in 1...2 {
                let reply = try await api.certificateChallenge(tenant, session: session, names: nil, taskId: "t\(attempt)")
                #expect(reply.string("disposition") == "useCredential", "\(reply)")
                #expect(reply.json["remainingAttempts"] as? Int == 3 - attempt)
                let decision = try #require(reply.string("decisionId"))
                let outcome = try await api.call(.post, "/v1/decisions/\(decision)/outcome", key: tenant.clientKey, json: ["outcome": "rejected"])
                #expect(outcome.json["counted"] as? Bool == true, "\(outcome)")
            }
            let blocked = try await api.certificateChallenge(tenant, session: session, names: nil, taskId: "t3")
            #expect(blocked.string("disposition") == "cancelAuthenticationChallenge", "\(blocked)")
            #expect(blocked.json["remainingAttempts"] as? Int == 0)
            #expect(blocked.string("blockedUntil") != nil)
            #expect(blocked.credential == nil)

            let counters = try await api.call(.get, "/v1/counters?credentialId=\(a)", key: tenant.adminKey)
            let counter = try #require((counters.json["counters"] as? [[String: Any]])?.first, "\(counters)")
            #expect(counter["failures"] as? Int == 2)
            #expect(counter["account"] as? String == pki.clientA.certificate.subject)
            // An admin reset releases it again.
            let reset = try await api.call(.post, "/v1/counters/\(counter["id"] as? String ?? "")/reset", key: tenant.adminKey)
            #expect(reset.status == 200, "\(reset)")
            let again = try await api.certificateChallenge(tenant, session: session, names: nil, taskId: "t4")
            #expect(again.string("disposition") == "useCredential")
        }
    }

    /// A refused client-certificate handshake comes back as the challenge with
    /// `previousFailureCount > 0` and no user (an identity credential has none): it counts the
    /// rejection of the identity last released there, once (found by review: never counted).
    @Test func aRetryCountsTheRejectionOfTheIdentityReleased() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let a = try await api.identity(tenant, pki.clientA)
            try await api.policy(tenant, rules: TLSRules.clientCertificate(then: #""maxFailures": 2, "persistence": "none""#))
            let session = try await api.session(tenant)
            let first = try await api.certificateChallenge(tenant, session: session, names: nil)
            let released = try #require(first.string("decisionId"), "\(first)")
            let retry = try await api.certificateChallenge(tenant, session: session, names: nil, previousFailureCount: 1)
            #expect(retry.string("countedRejection") == released, "\(retry)")
            #expect(retry.json["remainingAttempts"] as? Int == 1, "\(retry)")
            let blocked = try await api.certificateChallenge(tenant, session: session, names: nil, previousFailureCount: 2)
            #expect(blocked.string("countedRejection") == retry.string("decisionId"), "\(blocked)")
            #expect(blocked.string("disposition") == "cancelAuthenticationChallenge" && blocked.credential == nil, "\(blocked)")
            let counters = try await api.call(.get, "/v1/counters?credentialId=\(a)", key: tenant.adminKey)
            #expect((counters.json["counters"] as? [[String: Any]])?.first?["failures"] as? Int == 2, "\(counters)")
        }
    }

    @Test func releasedIdentitiesNeverPrintTheirSecrets() throws {
        let released = ReleasedIdentity(
            identityId: UUID(), subject: "CN=x", issuer: "CN=ca", sha256Fingerprint: String(repeating: "a", count: 64), notAfter: Date(),
            pkcs12: "MIIKpQIBAzCCCl8GCSqGSIb3DQEHAaCCClAEggpMMIIKSDCCBP8", passphrase: "one-time-passphrase-value"
        )
        for text in [String(describing: released), String(reflecting: released), "\(released)", String(describing: Mirror(reflecting: released).children.map(\.value))] {
            #expect(!text.contains("one-time-passphrase-value"))
            #expect(!text.contains("MIIKpQIBAzCC"))
        }
    }
}
