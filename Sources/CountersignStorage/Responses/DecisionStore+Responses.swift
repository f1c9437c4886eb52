import CountersignPostgres
public import Foundation

extension DecisionStore {
    /// The latest decision of a session's task that released a credential for the server or
    /// proxy at `host`:`port` (any realm or method): the credential whose header a further 401,
    /// 407 or 403 for that task answers.
    public func lastRelease(sessionID: UUID, taskID: String, isProxy: Bool, host: String, port: Int) async throws -> DecisionEntry? {
        try await pool.withConnection { connection in
            try connection.query(
                """
                SELECT \(Self.columns) FROM decisions d
                WHERE d.session_id = $1 AND d.task_id = $2 AND d.is_proxy = $3 AND d.host = $4 AND d.port = $5
                  AND d.disposition = 'useCredential' AND d.credential_id IS NOT NULL
                ORDER BY d.created_at DESC, d.id DESC LIMIT 1
                """,
                [.uuid(sessionID), .text(taskID), .bool(isProxy), .text(host.lowercased()), .int(Int64(port))]
            ).rows.first.map(Self.entry(from:))
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
