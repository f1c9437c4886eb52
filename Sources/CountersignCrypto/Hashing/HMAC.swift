internal import COpenSSL

/// Keyed-hash message authentication codes (RFC 2104), computed by OpenSSL.
public enum HMAC {
    /// The HMAC of `message` under `key` with `algorithm`; as long as the algorithm's digest.
    ///
    /// Compare codes with `ConstantTime.equals`, never with `==`.
    public static func authenticationCode(_ algorithm: HashAlgorithm, key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // OpenSSL rejects a NULL key pointer even with length 0, and an empty Swift array may
        // have no storage; a one-byte buffer with length 0 is the empty key.
        let keyBuffer = key.isEmpty ? [0] : key
        let result = keyBuffer.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                output.withUnsafeMutableBufferPointer { out in
                    COpenSSL.HMAC(
                        algorithm.evp,
                        keyBytes.baseAddress,
                        Int32(key.count),
                        messageBytes.baseAddress,
                        messageBytes.count,
                        out.baseAddress,
                        &length
                    )
                }
            }
        }
        // As with Digest: HMAC fails only on allocation failure or a missing algorithm, both
        // of which mean the process is misconfigured, not that the input is bad.
        precondition(result != nil, "OpenSSL HMAC failed for \(algorithm)")
        OpenSSLErrorQueue.clear()
        return Array(output.prefix(Int(length)))
    }
}
