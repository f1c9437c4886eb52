public import CountersignCore
public import CountersignStorage
import Foundation

/// Opened passwords by credential, at the newest secret version seen (see `OpenedSecrets`).
public final class SecretCache: Sendable {
    let store: CredentialStore
    private let passwords = OpenedSecrets<String>(limit: 50_000)

    public init(store: CredentialStore) {
        self.store = store
    }

    /// The password of `credential` at its secret version; `nil` when the stored secret has
    /// moved on (the caller's state is stale).
    public func password(of credential: Credential) async throws -> String? {
        try await passwords.secret(of: credential) {
            try await store.password(tenantID: credential.tenantID, id: credential.id, secretVersion: credential.secretVersion)
        }
    }

    /// Drops the passwords opened longer than `age` ago.
    public func forget(openedLongerThan age: Duration) {
        passwords.forget(openedBefore: .now - age)
    }
}
