import CountersignCore
@testable import CountersignService
import Foundation
import Synchronization
import Testing

@Suite struct OpenedSecretsTests {
    private let tenantID = UUID()

    private func credential(_ id: UUID, version: Int) -> Credential {
        Credential(
            id: id, tenantID: tenantID, kind: .password,
            attributes: CredentialAttributes(host: "intranet.example.com", account: "alice"),
            domain: nil, label: nil, owner: .tenant(submittedBy: nil), secretVersion: version, createdAt: Date(), updatedAt: Date()
        )
    }

    @Test func opensEachVersionOnceAndKeepsOnlyTheNewest() async throws {
        let cache = OpenedSecrets<String>(limit: 10)
        let id = UUID()
        let opened = Mutex(0)
        func open(_ secret: String?) -> () async throws -> String? {
            { opened.withLock { $0 += 1 }; return secret }
        }
        #expect(try await cache.secret(of: credential(id, version: 1), open: open("first")) == "first")
        #expect(try await cache.secret(of: credential(id, version: 1), open: open("never read")) == "first")
        #expect(opened.withLock { $0 } == 1)

        #expect(try await cache.secret(of: credential(id, version: 2), open: open("second")) == "second")
        #expect(cache.count == 1, "the replaced secret is no longer held")
        // Version 1 is not served from memory any more: it is opened again, and the store has moved on.
        #expect(try await cache.secret(of: credential(id, version: 1), open: open(nil)) == nil)
        #expect(opened.withLock { $0 } == 3)
    }

    @Test func aCallerWithOlderStateDoesNotPushOutTheNewerVersion() async throws {
        let cache = OpenedSecrets<String>(limit: 10)
        let id = UUID()
        _ = try await cache.secret(of: credential(id, version: 3)) { "third" }
        #expect(try await cache.secret(of: credential(id, version: 2)) { "second" } == "second")
        #expect(try await cache.secret(of: credential(id, version: 3)) { Issue.record("version 3 was opened again"); return nil } == "third")
    }

    @Test func staysWithinItsLimit() async throws {
        let cache = OpenedSecrets<String>(limit: 3)
        for _ in 0..<7 { _ = try await cache.secret(of: credential(UUID(), version: 1)) { "secret" } }
        #expect(cache.count <= 3)
    }

    @Test func forgetsWhatWasOpenedBeforeTheCutoff() async throws {
        let cache = OpenedSecrets<String>(limit: 10)
        let old = UUID()
        _ = try await cache.secret(of: credential(old, version: 1)) { "old" }
        let cutoff = ContinuousClock.now
        let recent = UUID()
        _ = try await cache.secret(of: credential(recent, version: 1)) { "recent" }
        #expect(cache.forget(openedBefore: cutoff) == 1)
        #expect(try await cache.secret(of: credential(recent, version: 1)) { Issue.record("the recent secret was opened again"); return nil } == "recent")
        // The forgotten one is opened again when next released.
        #expect(try await cache.secret(of: credential(old, version: 1)) { "old, opened again" } == "old, opened again")
    }
}
