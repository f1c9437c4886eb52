import CountersignPostgres
import Foundation
import Testing

/// Hosts are compared in their ASCII form (IDNA, as Apple's `URL` applies it): a credential an
/// admin saves for `bücher.example` answers the challenges of Apple clients, which report the
/// host as `xn--bcher-kva.example`, and a client that sends the name as written is answered alike.
@Suite("Internationalized host names")
struct InternationalHostTests {
    @Test func aCredentialSavedWithAUnicodeHostAnswersEitherForm() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let saved = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: ["host": "Bücher.Example", "account": "svc", "password": "idn-pw"])
            #expect(saved.status == 201 && saved.string("host") == "xn--bcher-kva.example", "\(saved)")
            try await api.policy(tenant, rules: #"[{"id": "idn", "match": {"host": "*.example"}, "then": {"disposition": "useCredential"}}]"#)
            let session = try await api.session(tenant)
            for (task, host) in [("apple", "xn--bcher-kva.example"), ("as-written", "bücher.example"), ("upper", "BÜCHER.EXAMPLE.")] {
                let reply = try await api.challenge(tenant, session: session, taskId: task, host: host)
                #expect(reply.credentialPassword == "idn-pw", "\(host): \(reply)")
            }
            // Saving it again under the other form is the same keychain key.
            let again = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: ["host": "xn--bcher-kva.example", "account": "svc", "password": "idn-pw-2"])
            #expect(again.status == 200 && again.string("id") == saved.string("id"), "\(again)")
        }
    }

    /// Rows saved before hosts took their ASCII form hold an internationalized name as sent: they
    /// answer as before, are found by a listing filter naming the host as they hold it, and
    /// saving the same keychain key again updates them in place.
    @Test func aRowSavedWithTheNameAsWrittenStillAnswersAndIsUpdatedInPlace() async throws {
        try await TestService.withSideAccess { api, side in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant, host: "placeholder.example", password: "legacy-pw")
            let turned = try await side.withConnection { connection in
                try connection.execute("UPDATE credentials SET host = 'münchen.example' WHERE id = $1", [.uuid(try #require(UUID(uuidString: id)))])
            }
            #expect(turned == 1)
            try await api.policy(tenant, rules: #"[{"id": "idn", "match": {"host": "*.example"}, "then": {"disposition": "useCredential"}}]"#)
            let session = try await api.session(tenant)
            #expect(try await api.challenge(tenant, session: session, host: "xn--mnchen-3ya.example").credentialPassword == "legacy-pw")

            let listed = try await api.call(.get, "/v1/credentials?host=M%C3%BCnchen.example", key: tenant.adminKey)
            #expect((listed.json["credentials"] as? [[String: Any]])?.map { $0["id"] as? String } == [id], "\(listed)")
            let saved = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: ["host": "münchen.example", "account": "svc", "password": "new-pw"])
            #expect(saved.status == 200 && saved.string("id") == id, "\(saved)")
            #expect(try await api.challenge(tenant, session: session, taskId: "task-2", host: "xn--mnchen-3ya.example").credentialPassword == "new-pw")
        }
    }

    /// A glob names internationalized labels in their ASCII form, and one that does not is told it.
    @Test func aGlobWithAUnicodeLabelIsRefusedWithItsASCIIForm() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let current = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
            let refused = try await api.call(
                .put, "/v1/policy", key: tenant.adminKey,
                json: #"{"version": \#(current.json["version"] as? Int ?? 0), "rules": [{"id": "idn", "match": {"host": "*.bücher.example"}, "then": {"disposition": "useCredential"}}]}"#
            )
            #expect(refused.status == 400 && refused.errorCode == "invalid_host_pattern", "\(refused)")
            #expect(refused.text.contains("'*.xn--bcher-kva.example'"), "\(refused)")
        }
    }
}
