public import CountersignCore
public import CountersignStorage
import Foundation
import Synchronization

/// Opened passwords by credential and secret version, so that releasing a credential does
/// not cost a database read and a decryption each time. Lives in this process's memory only,
/// like the data keys that open them.
public final class SecretCache: Sendable {
    private struct Key: Hashable {
        var credentialID: UUID
        var secretVersion: Int
    }

    let store: CredentialStore
    private let passwords = Mutex<[Key: String]>([:])
    private static let limit = 50_000

    public init(store: CredentialStore) {
        self.store = store
    }

    /// The password of `credential` at its secret version; `nil` when the stored secret has
    /// moved on (the caller's state is stale).
    public func password(of credential: Credential) async throws -> String? {
        let key = Key(credentialID: credential.id, secretVersion: credential.secretVersion)
        if let password = passwords.withLock({ $0[key] }) { return password }
        guard let password = try await store.password(tenantID: credential.tenantID, id: credential.id, secretVersion: credential.secretVersion) else {
            return nil
        }
        passwords.withLock { passwords in
            if passwords.count >= Self.limit { passwords.removeAll(keepingCapacity: true) }
            passwords[key] = password
        }
        return password
    }
}
