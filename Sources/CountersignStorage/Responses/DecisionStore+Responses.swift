import CountersignCore
import CountersignPostgres
public import Foundation

extension DecisionStore {
    /// The latest decision of a session's task that released a credential for the server or
    /// proxy at `host`:`port` (any realm or method): the credential whose header a further 401,
    /// 407 or 403 for that task answers.
    public func lastRelease(sessionID: UUID, taskID: String, isProxy: Bool, host: String, port: Int) async throws -> DecisionEntry? {
        // Decisions record their space's host folded (`ProtectionSpace.normalized`): only lowered,
        // a fully qualified name's trailing dot or a bare IPv6 address found no release, and a
        // further 401/407 for the header just issued counted no rejection.
        let host = ProtectionSpace.foldedHost(host)
        return try await pool.withConnection { connection in
            try connection.query(
                """
                SELECT \(Self.columns) FROM decisions d
                WHERE d.session_id = $1 AND d.task_id = $2 AND d.is_proxy = $3 AND d.host = $4 AND d.port = $5
                  AND d.disposition = 'useCredential' AND d.credential_id IS NOT NULL
                ORDER BY d.created_at DESC, d.id DESC LIMIT 1
                """,
                [.uuid(sessionID), .text(taskID), .bool(isProxy), .text(host), .int(Int64(port))]
            ).rows.first.map(Self.entry(from:))
        }
    }

    /// How often the attempt `release` belongs to was continued already (a renewed Digest nonce,
    /// the NTLM handshake's next message): the other releases of its kind and method to its task,
    /// for the same server, at the same failure count, that were continued. A continuation keeps
    /// the attempt's failure count; a rejection starts the next attempt with a higher one. Each
    /// release is continued at most once (`claimContinuation`), so these releases form one chain
    /// and their number is exact. A release that was not continued does not count: copies of one
    /// rejection can each start the next attempt, and their releases are siblings, not a chain.
    public func continuations(of release: DecisionEntry) async throws -> Int {
        try await pool.withConnection { connection in
            try connection.query(
                """
                SELECT count(*) AS continued FROM decisions d
                WHERE d.session_id = $1 AND d.task_id = $2 AND d.id <> $3 AND d.is_proxy = $4 AND d.host = $5 AND d.port = $6
                  AND d.authentication_method = $7 AND d.previous_failure_count = $8
                  AND d.disposition = 'useCredential' AND d.credential_id IS NOT NULL AND d.kind = $9
                  AND d.continued_at IS NOT NULL
                """,
                [
                    .uuid(release.sessionId), .text(release.taskId), .uuid(release.id), .bool(release.protectionSpace.isProxy),
                    .text(release.protectionSpace.host), .int(Int64(release.protectionSpace.port)),
                    .text(release.protectionSpace.authenticationMethod), .int(Int64(release.previousFailureCount)), .text(release.kind),
                ]
            ).rows[0].decode("continued")
        }
    }

    /// Claims `release` for the one response that continues its attempt: `false` when another
    /// response holds it (``heldByContinuation``), or it has an outcome. One statement, so that of
    /// two responses forwarded at once for one task, through any instances, exactly one continues.
    public func claimContinuation(of release: DecisionEntry) async throws -> Bool {
        try await pool.withConnection { connection in
            try connection.execute(
                "UPDATE decisions AS d SET continued_at = now() WHERE d.id = $1 AND d.outcome IS NULL AND NOT \(Self.heldByContinuation)",
                [.uuid(release.id)]
            ) == 1
        }
    }

    /// SQL of whether release `d` is held by the response that claimed it: something was decided
    /// for its task and server since the claim, or the claim is recent enough for that decision
    /// to be still on its way (a continuation is recorded within the statement and pool
    /// timeouts, seconds). An older claim with nothing after it was left by a failure that also
    /// kept it from being given back (the database gone, the process killed): it no longer
    /// holds, so that the task's later responses are not refused for ever.
    static let heldByContinuation = """
        (d.continued_at IS NOT NULL AND (d.continued_at > now() - interval '1 minute' OR EXISTS (
            SELECT 1 FROM decisions s
            WHERE s.session_id = d.session_id AND s.task_id = d.task_id AND s.id <> d.id
              AND s.is_proxy = d.is_proxy AND s.host = d.host AND s.port = d.port AND s.created_at >= d.continued_at)))
        """

    /// Gives up a claim whose continuation could not be recorded, so that the response can be
    /// forwarded again, or whose continuation released nothing, so that the release is still
    /// the one the task's next response answers.
    public func abandonContinuation(of release: DecisionEntry) async throws {
        try await pool.withConnection { connection in
            _ = try connection.execute("UPDATE decisions SET continued_at = NULL WHERE id = $1", [.uuid(release.id)])
        }
    }

    /// A decision of one session, or `nil` when it does not exist or belongs to another session.
    public func get(sessionID: UUID, id: UUID) async throws -> DecisionEntry? {
        try await pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM decisions d WHERE d.session_id = $1 AND d.id = $2", [.uuid(sessionID), .uuid(id)])
                .rows.first.map(Self.entry(from:))
        }
    }
}
