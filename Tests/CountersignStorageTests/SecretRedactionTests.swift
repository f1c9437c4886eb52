import CountersignCore
@testable import CountersignStorage
import Foundation
import Testing

/// Values that carry a password in the clear never show it when printed or dumped: a log line
/// or a crash report built from them must not leak it.
@Suite("Secret redaction")
struct SecretRedactionTests {
    static let password = "pa55-Redaction-Check"

    static func renderings(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped]
    }

    @Test func storedPasswordsAreRedacted() {
        let attributes = CredentialAttributes(host: "intranet.example.com", port: 443, protocolName: "https", realm: "Intranet", path: nil, authenticationMethod: nil, isProxy: false, account: "alice")
        let values: [Any] = [
            CredentialSecret(password: Self.password),
            CredentialStore.Input(attributes: attributes, domain: nil, label: nil, password: Self.password, owner: .tenant(submittedBy: nil)),
            CredentialStore.Changes(password: Self.password),
        ]
        for value in values {
            for text in Self.renderings(value) {
                #expect(!text.contains(Self.password), "\(text)")
                #expect(text.contains("redacted"), "\(text)")
            }
        }
    }

    /// A tenant API key shows its public prefix only, also when dumped: on its own and inside
    /// the value that carries it from its creation to the one response that shows it.
    @Test func apiKeysShowTheirPrefixOnly() {
        let secret = "Key-Redaction-Check-" + String(repeating: "k", count: 23)
        let token = APIKeyToken(lookupID: "abcdefghijkm", secret: secret)
        let key = APIKey(id: UUID(), tenantID: UUID(), name: "fleet", role: .client, prefix: token.prefix, createdAt: Date(), revokedAt: nil)
        for value in [token, APIKeyStore.Created(key: key, token: token)] as [Any] {
            for text in Self.renderings(value) {
                #expect(!text.contains("Key-Redaction-Check"), "\(text)")
                #expect(text.contains("csk_abcdefghijkm"), "\(text)")
            }
        }
    }
}
