import CountersignPostgres
import Foundation
import Testing

/// A credential saved with `exportable: false` keeps its password in the service: it answers
/// Digest challenges of raw responses, whose header the service computes, and nothing that would
/// hand the password to a client.
@Suite("Unexportable credentials")
struct UnexportableCredentialTests {
    static let basic = [["WWW-Authenticate", #"Basic realm="Files""#]]
    static let digestAndBasic = [
        ["WWW-Authenticate", #"Basic realm="Files""#],
        ["WWW-Authenticate", #"Digest realm="Files", nonce="n-1", qop="auth", algorithm=SHA-256"#],
    ]

    @Test func itsPasswordAnswersDigestResponsesAndNothingThatWouldCarryIt() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant, json: #""host": "files.example.com", "account": "alice", "password": "kept-in", "exportable": false"#)
            try await api.policy(tenant, rules: #"[{"id": "files", "match": {"host": "files.example.com"}, "then": {"disposition": "useCredential", "persistence": "forSession"}}]"#)
            let listed = try await api.call(.get, "/v1/credentials/\(id)", key: tenant.adminKey)
            #expect(listed["exportable"] as? Bool == false, "\(listed)")
            let session = try await api.session(tenant)

            let challenge = try await api.decided(tenant, session: session, space: Space.basic.with { $0.host = "files.example.com"; $0.realm = "Files" })
            #expect(challenge.string("disposition") == "cancelAuthenticationChallenge", "\(challenge)")
            #expect(challenge["credential"] is NSNull)
            #expect(challenge.string("reason")?.contains("never leaves the service") == true)
            #expect(!challenge.text.contains("kept-in"))

            // Basic's header would carry the password: Digest is taken when offered, whatever the order.
            let both = try await api.response(tenant, session: session, headers: Self.digestAndBasic)
            #expect(both.authorizationValue?.hasPrefix("Digest ") == true, "\(both)")
            #expect(!both.text.contains("kept-in"))
            let basicOnly = try await api.response(tenant, session: session, taskId: "task-2", headers: Self.basic)
            #expect(basicOnly.authorizationValue == nil, "\(basicOnly)")
            #expect(basicOnly.string("disposition") == "cancelAuthenticationChallenge")
            #expect(!basicOnly.text.contains("kept-in") && !basicOnly.text.contains(Data("alice:kept-in".utf8).base64EncodedString()))

            let explained = try await api.call(
                .post, "/v1/policy/explain", key: tenant.adminKey,
                json: #"{"challenge": {"taskId": "t", "protectionSpace": {"host": "files.example.com", "port": 443, "protocol": "https", "realm": "Files", "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic"}}}"#
            )
            #expect(explained.string("disposition") == "cancelAuthenticationChallenge", "\(explained)")
        }
    }

    /// What a session remembered from a Digest answer stays for the next one: a challenge that
    /// could not use it does not make the session forget it.
    @Test func aDigestAnswerRememberedOutlivesAChallengeThatCannotUseIt() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, json: #""host": "files.example.com", "account": "alice", "password": "kept-in", "exportable": false"#)
            try await api.policy(tenant, rules: #"[{"id": "files", "match": {"host": "files.example.com"}, "then": {"disposition": "useCredential", "persistence": "forSession"}}]"#)
            let session = try await api.session(tenant)
            let digest = [["WWW-Authenticate", #"Digest realm="Files", nonce="n-1", qop="auth", algorithm=SHA-256"#]]
            let first = try await api.response(tenant, session: session, headers: digest)
            #expect(first.string("source") == "policy", "\(first)")
            let challenge = try await api.decided(
                tenant, session: session, taskId: "task-2",
                space: Space.basic.with { $0.host = "files.example.com"; $0.realm = "Files"; $0.authenticationMethod = "NSURLAuthenticationMethodHTTPDigest" }
            )
            #expect(challenge.string("disposition") == "cancelAuthenticationChallenge", "\(challenge)")
            #expect(challenge.string("reason")?.contains("never leaves the service") == true)
            #expect(!challenge.text.contains("kept-in"))
            let again = try await api.response(tenant, session: session, taskId: "task-3", headers: digest)
            #expect(again.string("source") == "session", "\(again)")
            #expect(again.authorizationValue?.hasPrefix("Digest ") == true)
        }
    }

    @Test func madeUnexportableItIsNoLongerServedFromTheSessionAndTheChangeIsInItsHistory() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""persistence": "forSession""#)
            let session = try await api.session(tenant)
            #expect(try await api.decided(tenant, session: session).string("disposition") == "useCredential")

            let patched = try await api.call(.patch, "/v1/credentials/\(id)", key: tenant.adminKey, json: #"{"exportable": false}"#)
            #expect(patched.status == 200 && patched["exportable"] as? Bool == false, "\(patched)")
            let withheld = try await api.decided(tenant, session: session, taskId: "task-2")
            #expect(withheld.string("disposition") == "cancelAuthenticationChallenge", "\(withheld)")
            #expect(!withheld.text.contains("s3cret"))
            let history = try await api.history(tenant, credential: id)
            #expect(history.contains { $0["event"] as? String == "updated" && ($0["details"] as? [String: String])?["exportable"] == "false" }, "\(history)")

            // A save that leaves it out keeps it; null cannot clear it.
            let saved = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: ["host": "intranet.example.com", "account": "svc", "password": "s3cret"])
            #expect(saved.status == 200 && saved["exportable"] as? Bool == false, "\(saved)")
            let cleared = try await api.call(.patch, "/v1/credentials/\(id)", key: tenant.adminKey, json: #"{"exportable": null}"#)
            #expect(cleared.status == 400, "\(cleared)")

            // Sealed again each way (the flag is sealed with the secret), the password stays.
            #expect(try await api.call(.patch, "/v1/credentials/\(id)", key: tenant.adminKey, json: #"{"exportable": true}"#).status == 200)
            let released = try await api.decided(tenant, session: session, taskId: "task-3")
            #expect((released["credential"] as? [String: Any])?["password"] as? String == "s3cret", "\(released)")
            let reread = try await api.call(.get, "/v1/credentials/\(id)", key: tenant.adminKey)
            #expect(reread.int("secretVersion") == 1, "sealing again is no new secret: \(reread)")
        }
    }

    /// The flag is sealed with the password: turned in the database without sealing again (as a
    /// release before it, or a hand, would), the password opens nowhere, rather than leaving.
    @Test func aFlagTurnedInTheDatabaseAloneReleasesNothing() async throws {
        try await TestService.withSideAccess { api, side in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant, json: #""host": "intranet.example.com", "account": "svc", "password": "kept-in", "exportable": false"#)
            try await api.releasePolicy(tenant, then: #""persistence": "none""#)
            let turned = try await side.withConnection { try $0.execute("UPDATE credentials SET exportable = true WHERE id = $1", [.uuid(try #require(UUID(uuidString: id)))]) }
            #expect(turned == 1)
            let session = try await api.session(tenant)
            let refused = try await api.decide(tenant, session: session, ChallengeBody(taskId: "task-1"))
            #expect(refused.status >= 500, "\(refused)")
            #expect(refused.errorCode == "secret_unreadable", "\(refused)")
            #expect(!refused.text.contains("kept-in"))
        }
    }

    @Test func aSecurityCheckDoesNotAnswerWithItsPassword() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant, json: #""host": "mfp.example.com", "account": "pin", "password": "0000", "exportable": false"#)
            try await api.securityCheckHandlers(tenant, #"[{"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "credentialId": "\#(id)", "answer": {"pin": "$secret"}}]"#)
            let session = try await api.session(tenant)
            let checked = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 3}}"#)
            let answer = try #require(checked.answer("PinCodeAttempts"), "\(checked)")
            #expect(answer["action"] as? String == "cancel", "\(checked)")
            #expect(!checked.text.contains("0000"))
        }
    }
}
