import CountersignCore
import CountersignStorage
import Foundation
import Testing

@Suite("Security-check states")
struct SecurityCheckStoreTests {
    static let limits = SecurityCheckLimits(
        maxAttempts: 3, attemptingStateExpirationSec: 60, successStateExpirationSec: 60, blockedStateExpirationSec: 300, maxFailures: 5, blockSeconds: 60
    )

    /// A decision made from a challenge came back stale because a failure was counted meanwhile;
    /// the failure may also have blocked the client. What the answer is decided from again is the
    /// client's state as it is now, with the counter: the state read first, with the new counter,
    /// released an answer to a client blocked since.
    @Test func aRefreshReadsTheClientsStateAgainWithTheCounter() async throws {
        try await StorageFixture.run { fixture in
            let store = SecurityCheckStore(pool: fixture.pool)
            let started = try await store.challenged(
                tenantID: fixture.tenantID, securityCheck: "pin", clientID: "device-1", limits: Self.limits, credentialID: nil, spaceKey: "pin-space"
            )
            #expect(started.state.stored == .attempting)
            // A failure reported through another session blocks the client meanwhile.
            try await fixture.pool.withConnection { connection in
                try connection.execute(
                    "UPDATE security_check_states SET state = 'blocked', attempts = 3, expires_at = now() + interval '5 minutes' WHERE tenant_id = $1 AND client_id = 'device-1'",
                    [.uuid(fixture.tenantID)]
                )
            }
            let refreshed = try await store.refreshed(
                started, tenantID: fixture.tenantID, securityCheck: "pin", clientID: "device-1", credentialID: nil, spaceKey: "pin-space"
            )
            #expect(refreshed.state.stored == .blocked)
            #expect(refreshed.state.attempts == 3)
        }
    }
}
