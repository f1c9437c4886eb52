import CountersignCore
import CountersignPostgres
import Foundation

/// Counting one rejection, exactly: an atomic increment of the counter row, and the block
/// when the count reaches the rule's limit. Runs inside the caller's transaction, after it has
/// taken the session, decision and credential locks and done the rest of its writes (see
/// `DecisionStore.recordOutcome`).
enum RejectionCounting {
    static func count(
        tenantID: UUID,
        credentialID: UUID,
        spaceKey: String,
        clientID: String,
        maxFailures: Int?,
        schedule: BlockSchedule,
        on connection: PostgresConnection
    ) throws -> DecisionStore.CounterState {
        // One statement for the counter and its client's share: the counter row stays locked
        // from here to the commit, and every other outcome of the credential waits for it.
        let counter = try connection.query(
            """
            WITH counter AS (
                INSERT INTO rejection_counters AS rc (id, tenant_id, credential_id, space_key, failures, total_rejections, last_rejection_at)
                VALUES ($1, $2, $3, $4, 1, 1, now())
                ON CONFLICT (tenant_id, credential_id, space_key) DO UPDATE SET failures = rc.failures + 1,
                    total_rejections = rc.total_rejections + 1, last_rejection_at = now(), updated_at = now()
                RETURNING rc.id, rc.failures, rc.repeated_blocks, rc.blocked_until > now() AS blocked, rc.blocked_until
            ), client AS (
                INSERT INTO rejection_counter_clients AS c (counter_id, client_id, rejections, last_rejection_at)
                SELECT id, $5, 1, now() FROM counter
                ON CONFLICT (counter_id, client_id) DO UPDATE SET rejections = c.rejections + 1, last_rejection_at = now()
            )
            SELECT id, failures, repeated_blocks, blocked, blocked_until FROM counter
            """,
            [.uuid(UUID.random()), .uuid(tenantID), .uuid(credentialID), .text(spaceKey), .text(clientID)]
        ).rows[0]
        let counterID: UUID = try counter.decode("id")
        let failures: Int = try counter.decode("failures")
        let alreadyBlocked = try counter.decode("blocked", as: Bool?.self) ?? false
        guard let maxFailures, failures >= maxFailures, !alreadyBlocked else {
            return .init(failures: failures, maxFailures: maxFailures, blockedUntil: alreadyBlocked ? try counter.decode("blocked_until") : nil)
        }
        // Grown by the blocks since the last accepted outcome, reset or new secret, not by every
        // block the counter ever had (migrations/0016_blocks_growing_in_a_row.sql).
        let seconds = schedule.duration(afterEarlierBlocks: try counter.decode("repeated_blocks"))
        let blockedUntil: Date = try connection.query(
            """
            UPDATE rejection_counters SET blocked_until = now() + make_interval(secs => $2), blocks = blocks + 1, repeated_blocks = repeated_blocks + 1,
                last_blocked_at = now(), updated_at = now()
            WHERE id = $1 RETURNING blocked_until
            """,
            [.uuid(counterID), .int(seconds)]
        ).rows[0].decode("blocked_until")
        try CredentialHistory.record(
            "blocked",
            credentialID: credentialID,
            tenantID: tenantID,
            actor: "client:\(clientID)",
            details: ["failures": String(failures), "seconds": String(seconds), "spaceKey": spaceKey],
            on: connection
        )
        try TenantStateVersion.bump(tenantID, on: connection)
        return .init(failures: failures, maxFailures: maxFailures, blockedUntil: blockedUntil)
    }
}
