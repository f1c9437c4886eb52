import CountersignCore
import CountersignCrypto
public import CountersignPostgres
public import Foundation

/// Digest nonce counts (`nc`), kept centrally per credential and nonce, so that two clients or
/// two service instances answering with the same nonce never send the same count twice
/// (RFC 7616 §3.4: a server may refuse a repeated or, with strict checking, a skipped count).
public struct DigestNonceCountStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// The next count for `nonce` with `credentialID`: 1 the first time, then 2, 3...; taken
    /// with one atomic upsert, so concurrent callers each get their own. `nil` when the
    /// credential no longer exists.
    public func next(tenantID: UUID, credentialID: UUID, nonce: String) async throws -> UInt32? {
        let key = Digest.hash(.sha256, Array(nonce.utf8))
        let count: Int64? = try await pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO digest_nonce_counts AS n (tenant_id, credential_id, nonce_sha256, count)
                SELECT $1, $2, $3, 1 WHERE EXISTS (SELECT 1 FROM credentials WHERE id = $2 AND tenant_id = $1)
                ON CONFLICT (tenant_id, credential_id, nonce_sha256) DO UPDATE SET count = n.count + 1, updated_at = now()
                RETURNING n.count
                """,
                [.uuid(tenantID), .uuid(credentialID), .bytea(key)]
            ).rows.first?.decode("count")
        }
        guard let count else { return nil }
        guard count <= Int64(UInt32.max) else {
            throw CountersignError(.serviceBusy, "this Digest nonce has been used too often; the server must issue a new one")
        }
        return UInt32(count)
    }

    /// Deletes the counts of nonces not used for `seconds`; returns how many.
    @discardableResult
    public func purge(unusedFor seconds: Int) async throws -> Int {
        try await pool.withConnection { connection in
            try connection.execute(
                "DELETE FROM digest_nonce_counts WHERE updated_at < now() - make_interval(secs => $1)",
                [.int(Int64(seconds))]
            )
        }
    }
}
