import CountersignCore
import CountersignStorage
import Foundation
import Synchronization

/// Checks bearer keys, remembering keys that checked out for a short while so that a busy
/// client does not cost a database read per request.
///
/// The cache holds the stored hash, never the key text; every request still compares the
/// presented key against it in constant time. Revocations and tenant changes made through
/// this instance take effect at once; those made through another instance as soon as this one
/// hears of them (`AccessChange`, `buildApplication`), and within `ttl` while it cannot hear.
final class APIKeyAuthenticator: Sendable {
    private struct Entry {
        /// `nil`: no key has this lookup id. A client still sending a deleted key costs one query
        /// per period, not one per request.
        var found: APIKeyStore.Authenticated?
        var fetchedAt: ContinuousClock.Instant
    }

    /// The keys known, and how many forgets (revocations, tenants disabled or enabled) so far.
    /// A read that began before a forget may have found the key as it was before the change, so
    /// it is not kept, nor shared with the requests that come after (`KeyLookups`): otherwise a
    /// key revoked through this instance while a read of it was under way would be accepted
    /// here for another `ttl`.
    private struct Cache {
        /// Keys found.
        var entries: [String: Entry] = [:]
        /// Lookup ids no key has, apart: made-up keys, which cost nothing to send, fill this and
        /// are dropped together, and never push the keys found out.
        var unknown: [String: Entry] = [:]
        var forgets = 0
    }

    private let lookups: KeyLookups
    private let operatorKey: OperatorKey?
    private let ttl: Duration
    private let cache = Mutex(Cache())
    private static let cacheLimit = 10_000

    init(lookups: KeyLookups, operatorKey: OperatorKey?, ttl: Duration) {
        self.lookups = lookups
        self.operatorKey = operatorKey
        self.ttl = ttl
    }

    /// The principal a bearer token stands for, or an error saying why it stands for none.
    /// `verified` hears of a key whose secret checked out but that is revoked or whose tenant is
    /// disabled, before the refusal is thrown: the key is known, and the access line can name it.
    func authenticate(bearer token: Substring, verified: (Principal) -> Void = { _ in }) async throws -> Principal {
        if let parsed = APIKeyToken(parsing: token) {
            return .tenantKey(try await tenantKey(for: parsed, verified: verified))
        }
        if let operatorKey, operatorKey.matches(token) {
            return .operator
        }
        throw CountersignError.apiKeyNotValid
    }

    private func tenantKey(for token: APIKeyToken, verified: (Principal) -> Void) async throws -> APIKey {
        let now = ContinuousClock.now
        let (cached, forgets) = cache.withLock { ($0.entries[token.lookupID] ?? $0.unknown[token.lookupID], $0.forgets) }
        let stored: APIKeyStore.Authenticated?
        if let cached, now - cached.fetchedAt < ttl {
            stored = cached.found
        } else {
            // What is cached is the key under this lookup id (or that there is none), never the
            // outcome of one presented secret: a wrong secret must not lock the right one out.
            stored = try await lookups.key(lookupID: token.lookupID, readAfter: forgets)
            cache.withLock { cache in
                guard cache.forgets == forgets else { return }
                let entry = Entry(found: stored, fetchedAt: now)
                if stored == nil {
                    if cache.unknown.count >= Self.cacheLimit { cache.unknown.removeAll(keepingCapacity: true) }
                    cache.unknown[token.lookupID] = entry
                } else {
                    if cache.entries.count >= Self.cacheLimit { cache.entries.removeAll(keepingCapacity: true) }
                    cache.entries[token.lookupID] = entry
                    cache.unknown[token.lookupID] = nil
                }
            }
        }
        guard let found = stored.flatMap({ APIKeyStore.matches(token, hash: $0.secretHash) ? $0 : nil }) else {
            throw CountersignError.apiKeyNotValid
        }
        guard !found.key.isRevoked else {
            verified(.tenantKey(found.key))
            throw CountersignError.apiKeyNotValid
        }
        guard !found.tenantDisabled else {
            verified(.tenantKey(found.key))
            throw CountersignError.tenantIsDisabled
        }
        return found.key
    }

    /// Forgets what this instance knew about a key, after a revocation.
    func forget(keyID: UUID) {
        cache.withLock { cache in
            cache.entries = cache.entries.filter { $0.value.found?.key.id != keyID }
            cache.forgets &+= 1
        }
    }

    /// Forgets every key, when changes may have been missed.
    func forgetAll() {
        cache.withLock { cache in
            cache.entries.removeAll()
            cache.forgets &+= 1
        }
    }

    /// Forgets every key of a tenant, after the tenant was disabled or enabled.
    func forget(tenantID: UUID) {
        cache.withLock { cache in
            cache.entries = cache.entries.filter { $0.value.found?.key.tenantID != tenantID }
            cache.forgets &+= 1
        }
    }
}
