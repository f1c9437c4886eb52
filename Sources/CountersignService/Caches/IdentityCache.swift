public import CountersignCore
public import CountersignCrypto
public import CountersignStorage
import Foundation

/// Opened client identities by credential, at the newest secret version seen (see
/// `OpenedSecrets`); each release still builds a new PKCS#12 under a new passphrase.
public final class IdentityCache: Sendable {
    private let store: IdentityStore
    private let identities = OpenedSecrets<ClientIdentity>(limit: 10_000)

    public init(store: IdentityStore) {
        self.store = store
    }

    /// The identity `credential` names, opened; `nil` when it is gone or its secret moved on
    /// (the caller's state is stale).
    public func identity(of credential: Credential) async throws -> ClientIdentity? {
        try await identities.secret(of: credential) {
            try await store.identity(tenantID: credential.tenantID, id: credential.id, secretVersion: credential.secretVersion)
        }
    }

    /// Drops the identities opened longer than `age` ago.
    public func forget(openedLongerThan age: Duration) {
        identities.forget(openedBefore: .now - age)
    }
}
