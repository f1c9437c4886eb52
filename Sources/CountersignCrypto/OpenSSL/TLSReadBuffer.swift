internal import COpenSSL

/// What OpenSSL holds back of a TLS connection that another library drives (libpq).
public enum TLSReadBuffer {
    /// Bytes of a received record that OpenSSL has decrypted but not yet handed to its reader:
    /// data already off the socket, which no socket event will announce.
    ///
    /// - Parameter ssl: the connection's `SSL *` (libpq's `PQsslStruct(conn, "OpenSSL")`), used
    ///   only for this call, on the thread that owns the connection.
    public static func pendingBytes(ssl: UnsafeMutableRawPointer) -> Int {
        Int(SSL_pending(OpaquePointer(ssl)))
    }
}
