internal import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's default DRBG (seeded by the kernel).
public enum SecureRandom {
    /// The most bytes one call returns; far above any key or token, far below memory trouble.
    public static let maximumByteCount = 1 << 20

    /// `count` random bytes.
    ///
    /// - Throws: `CryptoError` `invalid_argument` when `count` is negative or above
    ///   `maximumByteCount`; `crypto_internal_failure` when OpenSSL cannot produce randomness
    ///   (its generator could not be seeded), which callers must treat as fatal for the request.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        guard count >= 0, count <= maximumByteCount else {
            throw CryptoError(.invalidArgument, "random byte count must be between 0 and \(maximumByteCount)")
        }
        guard count > 0 else { return [] }
        OpenSSLErrorQueue.clear()
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        guard ok == 1 else {
            let detail = OpenSSLErrorQueue.drainDescription()
            throw CryptoError(.internalFailure, "OpenSSL could not generate random bytes", detail: detail)
        }
        return bytes
    }

    /// A random token: `byteCount` random bytes in base64url without padding (RFC 4648 section 5),
    /// safe in URLs, headers and file names. The default 32 bytes carry 256 bits.
    public static func token(byteCount: Int = 32) throws(CryptoError) -> String {
        Base64.encode(try bytes(byteCount), url: true)
    }

    /// A one-time passphrase for a PKCS#12 file: 24 random bytes (192 bits) as 32 base64url
    /// characters, which every PKCS#12 reader accepts (ASCII only, no quoting needed in shells).
    public static func passphrase() throws(CryptoError) -> String {
        try token(byteCount: 24)
    }
}
