public import CountersignCore
public import CountersignCrypto
public import CountersignStorage
import Foundation
import Synchronization

/// Opened client identities by credential and secret version, so that releasing one does not
/// cost a database read and a decryption each time. In this process's memory only, like the
/// opened passwords of `SecretCache`; each release still builds a new PKCS#12 under a new
/// passphrase.
public final class IdentityCache: Sendable {
    private struct Key: Hashable {
        var credentialID: UUID
        var secretVersion: Int
    }

    private let store: IdentityStore
    private let identities = Mutex<[Key: ClientIdentity]>([:])
    private static let limit = 10_000

    public init(store: IdentityStore) {
        self.store = store
    }

    /// The identity `credential` names, opened; `nil` when it is gone or its secret moved on
    /// (the caller's state is stale).
    public func identity(of credential: Credential) async throws -> ClientIdentity? {
        let key = Key(credentialID: credential.id, secretVersion: credential.secretVersion)
        if let identity = identities.withLock({ $0[key] }) { return identity }
        guard let identity = try await store.identity(tenantID: credential.tenantID, id: credential.id, secretVersion: credential.secretVersion) else {
            return nil
        }
        identities.withLock { identities in
            if identities.count >= Self.limit { identities.removeAll(keepingCapacity: true) }
            identities[key] = identity
        }
        return identity
    }
}
