import Foundation
import Testing

/// Keychain attributes and protection spaces as long as the contract allows, in characters of
/// four UTF-8 bytes: each key is one index entry in PostgreSQL, which holds at most about 2.7 KB.
@Suite("Keys at their longest")
struct LongKeyTests {
    /// `count` characters of four UTF-8 bytes each, random so that PostgreSQL cannot compress them.
    static func wide(_ count: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<count { scalars.append(Unicode.Scalar(0x1_F300 + UInt32.random(in: 0..<0x300))!) }
        return String(scalars)
    }

    @Test func aCredentialAtItsLongestIsSavedAndKeyedAsAnyOther() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let attributes = ["realm": Self.wide(1000), "path": "/" + Self.wide(1999)]
            let account = Self.wide(1000)
            let id = try await api.credential(tenant, account: account, extra: attributes)
            // The same key again is the same credential, its secret updated in place.
            #expect(try await api.credential(tenant, account: account, password: "other", extra: attributes) == id)
            var elsewhere = attributes
            elsewhere["path"] = "/" + Self.wide(1999)
            #expect(try await api.credential(tenant, account: account, extra: elsewhere) != id)
        }
    }

    /// A realm of 1,600 bytes, about as long as a space's key allows (`ProtectionSpace.maximumKeyBytes`).
    @Test func aRealmAtItsLongestIsRememberedAndCounted() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let realm = Self.wide(400)
            _ = try await api.credential(tenant, extra: ["realm": realm])
            try await api.releasePolicy(tenant, then: #""maxFailures": 5"#)
            let session = try await api.session(tenant)
            let space = Space.basic.with { $0.realm = realm }
            let first = try await api.decided(tenant, session: session, space: space)
            #expect(first.string("disposition") == "useCredential", "\(first)")
            #expect(first.string("persistence") == "forSession")
            #expect(try await api.decided(tenant, session: session, taskId: "task-2", space: space).string("source") == "session")

            let retry = try await api.decide(
                tenant, session: session,
                ChallengeBody(protectionSpace: space, proposedCredential: .init(user: "svc", hasPassword: true), previousFailureCount: 1, failureResponse: .init(status: 401))
            )
            #expect(retry.status == 200 && retry.string("countedRejection") == first.string("decisionId"), "\(retry)")
            let counters = try await api.counters(tenant)
            #expect(counters.count == 1 && counters.first?["failures"] as? Int == 1, "\(counters)")
        }
    }

    /// Realms whose every character the space key escapes to three bytes: `|` and `%`.
    static let escapedRealm = String(repeating: "|%", count: 500)

    /// A space whose key would not fit an index entry is refused with a code, wherever it comes
    /// from: never a 500, which a decision batch shared with other clients would have been.
    @Test(arguments: [escapedRealm, wide(1000)])
    func aSpaceTooLongToKeyIsRefusedWithACode(realm: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant)
            let session = try await api.session(tenant)
            let space = Space.basic.with { $0.realm = realm }
            let challenge = try await api.decide(tenant, session: session, ChallengeBody(protectionSpace: space))
            #expect(challenge.status == 400 && challenge.errorCode == "invalid_field", "\(challenge)")
            let submitted = try await api.submit(tenant, session: session, space: space, user: "alice", password: "typed", persistence: "forSession")
            #expect(submitted.status == 400 && submitted.errorCode == "invalid_field", "\(submitted)")
            let quoted = realm.replacingOccurrences(of: "%", with: "|")
            let raw = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "Basic realm=\"\(quoted)\""]])
            #expect(raw.status == 400 && raw.errorCode == "challenge_too_large", "\(raw)")
            // The longest realm that fits is answered and remembered.
            let fitting = Space.basic.with { $0.realm = String(repeating: "|", count: 500) }
            #expect(try await api.decided(tenant, session: session, space: fitting).string("persistence") == "forSession")
            #expect(try await api.decided(tenant, session: session, taskId: "task-2", space: fitting).string("source") == "session")
        }
    }
}
