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
}
