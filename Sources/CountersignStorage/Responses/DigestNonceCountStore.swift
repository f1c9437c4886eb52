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

    /// A nonce's next count, and the client nonce the credential first answered it with.
    public struct Use: Sendable, Equatable {
        public var count: UInt32
        /// What a `-sess` algorithm hashes into A1 for every header of the nonce (RFC 7616
        /// §3.4.2): the `cnonce` offered with the nonce's first count.
        public var firstCnonce: String

        public init(count: UInt32, firstCnonce: String) {
            self.count = count
            self.firstCnonce = firstCnonce
        }
    }

    /// The next count for `nonce` with `credentialID`: 1 the first time, then 2, 3...; taken
    /// with one atomic upsert, so concurrent callers each get their own. `cnonce` is kept as the
    /// nonce's first when it has none yet. `nil` when the credential no longer exists.
    public func next(tenantID: UUID, credentialID: UUID, nonce: String, cnonce: String) async throws -> Use? {
        let key = Digest.hash(.sha256, Array(nonce.utf8))
        let row = try await pool.withConnection { connection -> (count: Int64, firstCnonce: String)? in
            guard let row = try connection.query(
                """
                INSERT INTO digest_nonce_counts AS n (tenant_id, credential_id, nonce_sha256, count, first_cnonce)
                SELECT $1, $2, $3, 1, $4 WHERE EXISTS (SELECT 1 FROM credentials WHERE id = $2 AND tenant_id = $1)
                ON CONFLICT (tenant_id, credential_id, nonce_sha256)
                    DO UPDATE SET count = n.count + 1, first_cnonce = coalesce(n.first_cnonce, excluded.first_cnonce), updated_at = now()
                RETURNING n.count, n.first_cnonce
                """,
                [.uuid(tenantID), .uuid(credentialID), .bytea(key), .text(cnonce)]
            ).rows.first else { return nil }
            return (try row.decode("count"), try row.decode("first_cnonce"))
        }
        guard let row else { return nil }
        guard row.count <= Int64(UInt32.max) else {
            throw CountersignError(.serviceBusy, "this Digest nonce has been used too often; the server must issue a new one")
        }
        return Use(count: UInt32(row.count), firstCnonce: row.firstCnonce)
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
