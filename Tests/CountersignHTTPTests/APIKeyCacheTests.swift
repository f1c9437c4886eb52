@testable import CountersignHTTP
import CountersignCore
@testable import CountersignStorage
import CountersignTestSupport
import Foundation
import Synchronization
import Testing

/// A key revoked through this instance is refused by it at once (README: only revocations made
/// through another instance take up to `COUNTERSIGN_API_KEY_CACHE_SECONDS`), even when a read of
/// the key that began before the revocation ends after it.
@Suite("API keys remembered across a revocation")
struct APIKeyCacheTests {
    static let token = APIKeyToken(lookupID: "abcdefghijkm", secret: String(repeating: "s", count: 43))
    static let keyID = UUID()

    /// The stored key. Each read sees the key as it is when the read reaches the database, and
    /// is then held until the test lets it go, as a slow answer would be.
    final class StoredKey: Sendable {
        private struct State {
            var revokedAt: Date?
            var held: [CheckedContinuation<Void, Never>] = []
        }
        private let state = Mutex(State())

        var held: Int { state.withLock { $0.held.count } }

        func revoke() { state.withLock { $0.revokedAt = Date() } }

        func find(_ lookupID: String) async -> APIKeyStore.Authenticated? {
            let revokedAt = state.withLock { $0.revokedAt }
            await withCheckedContinuation { continuation in
                state.withLock { $0.held.append(continuation) }
            }
            let key = APIKey(
                id: APIKeyCacheTests.keyID, tenantID: UUID(), name: "fleet", role: .client,
                prefix: APIKeyCacheTests.token.prefix, createdAt: Date(), revokedAt: revokedAt
            )
            return APIKeyStore.Authenticated(key: key, tenantDisabled: false, secretHash: APIKeyStore.hash(of: APIKeyCacheTests.token))
        }

        func releaseAll() {
            for continuation in state.withLock({ state in defer { state.held = [] }; return state.held }) { continuation.resume() }
        }
    }

    static func authenticator(_ stored: StoredKey) -> APIKeyAuthenticator {
        APIKeyAuthenticator(lookups: KeyLookups(limit: 4, maxWaiting: 16) { await stored.find($0) }, operatorKey: nil, ttl: .seconds(600))
    }

    static func accepted(_ authenticator: APIKeyAuthenticator) async -> Bool {
        (try? await authenticator.authenticate(bearer: Substring(token.text))) != nil
    }

    /// Made-up keys, each read once and remembered as unknown, must not push the real keys out
    /// of the cache: a client spraying them would otherwise make every real key cost a read
    /// again, and crowd the reads that the decisions' connections are kept from.
    @Test func madeUpKeysDoNotPushRealKeysOutOfTheCache() async throws {
        let reads = Mutex(0)
        let real = APIKeyStore.Authenticated(
            key: APIKey(id: Self.keyID, tenantID: UUID(), name: "fleet", role: .client, prefix: Self.token.prefix, createdAt: Date(), revokedAt: nil),
            tenantDisabled: false, secretHash: APIKeyStore.hash(of: Self.token)
        )
        let authenticator = APIKeyAuthenticator(
            lookups: KeyLookups(limit: 4, maxWaiting: 16) { lookupID in
                guard lookupID == APIKeyCacheTests.token.lookupID else { return nil }
                reads.withLock { $0 += 1 }
                return real
            },
            operatorKey: nil, ttl: .seconds(600)
        )
        #expect(await Self.accepted(authenticator))
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
        for n in 0..<10_001 {
            let lookupID = String((0..<12).map { alphabet[(n >> (5 * ($0 % 3))) & 31] })
            guard lookupID != Self.token.lookupID else { continue }
            _ = try? await authenticator.authenticate(bearer: Substring("csk_\(lookupID)_" + String(repeating: "x", count: 43)))
        }
        #expect(await Self.accepted(authenticator))
        #expect(reads.withLock { $0 } == 1)
    }

    /// A key revoked, as APIKeyController revokes it (committed, then forgotten here), while a
    /// request's read of it is held under way; that request is `before`.
    static func revokedWhileARequestReadsTheKey() async throws -> (StoredKey, APIKeyAuthenticator, before: Task<Bool, Never>) {
        let stored = StoredKey()
        let authenticator = authenticator(stored)
        let before = Task { await accepted(authenticator) }
        #expect(await eventually { stored.held == 1 })
        stored.revoke()
        authenticator.forget(keyID: keyID)
        return (stored, authenticator, before)
    }

    /// The request that read the key before the revocation is answered as it was read (the two
    /// were concurrent), but what it read is not kept for the requests after.
    @Test func aReadFromBeforeTheRevocationIsNotKept() async throws {
        let (stored, authenticator, before) = try await Self.revokedWhileARequestReadsTheKey()
        _ = await whileReleasing(stored.releaseAll) { await before.value }

        let after = Task { await Self.accepted(authenticator) }
        #expect(await eventually { stored.held == 1 })
        let accepted = await whileReleasing(stored.releaseAll) { await after.value }
        #expect(accepted == false, "a key revoked through this instance was accepted after the revocation")
    }

    /// A request that arrives after the revocation does not share the read still under way from
    /// before it.
    @Test func aRequestAfterTheRevocationDoesNotShareAReadFromBeforeIt() async throws {
        let (stored, authenticator, before) = try await Self.revokedWhileARequestReadsTheKey()
        let after = Task { await Self.accepted(authenticator) }
        // Its own read; a request sharing the earlier one would leave only that one held.
        _ = await eventually(timeout: .seconds(1)) { stored.held == 2 }
        let accepted = await whileReleasing(stored.releaseAll) {
            _ = await before.value
            return await after.value
        }
        #expect(accepted == false, "a key revoked through this instance was accepted after the revocation")
    }
}
