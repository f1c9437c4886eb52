import CountersignCore
import Foundation
import Synchronization

/// Opened secrets (passwords, client identities) by credential, so that releasing a credential
/// does not cost a database read and a decryption each time. In this process's memory only, like
/// the data keys that open them.
///
/// Only the newest secret version seen for a credential is kept: opening a newer one replaces the
/// older at once, so a secret that an admin replaced does not stay in memory after its successor
/// was first released. Nor does any secret stay much longer than `forget(openedBefore:)` lets it
/// (`PeriodicSweep.openedSecrets`): one deleted, replaced through another instance, or held by a
/// session that ended is never asked for again here, and would otherwise stay until the cache
/// fills.
final class OpenedSecrets<Secret: Sendable>: Sendable {
    private struct Entry {
        var secretVersion: Int
        /// `Credential.exportable` when it was opened: the flag is sealed with the secret, so a
        /// credential that now says otherwise is opened again, and opens only if it was sealed so.
        var exportable: Bool
        var secret: Secret
        var openedAt: ContinuousClock.Instant
    }

    private let entries = Mutex<[UUID: Entry]>([:])
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// The secret of `credential` at its secret version, opened by `open` unless already known;
    /// `nil` when `open` finds that version gone.
    func secret(of credential: Credential, open: () async throws -> Secret?) async throws -> Secret? {
        if let entry = entries.withLock({ $0[credential.id] }), entry.secretVersion == credential.secretVersion,
            entry.exportable == credential.exportable
        {
            return entry.secret
        }
        guard let secret = try await open() else { return nil }
        entries.withLock { entries in
            // A caller deciding from older state must not push out the newer version.
            if let known = entries[credential.id], known.secretVersion > credential.secretVersion { return }
            if entries.count >= limit, entries[credential.id] == nil { entries.removeAll(keepingCapacity: true) }
            entries[credential.id] = Entry(secretVersion: credential.secretVersion, exportable: credential.exportable, secret: secret, openedAt: .now)
        }
        return secret
    }

    /// Drops the secrets opened before `cutoff`; the next release opens them again.
    @discardableResult
    func forget(openedBefore cutoff: ContinuousClock.Instant) -> Int {
        entries.withLock { entries in
            let before = entries.count
            entries = entries.filter { $0.value.openedAt >= cutoff }
            return before - entries.count
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
