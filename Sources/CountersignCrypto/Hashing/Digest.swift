internal import COpenSSL

/// The hash functions Countersign needs, computed by OpenSSL.
public enum HashAlgorithm: Sendable, Hashable, CaseIterable {
    case md5
    case sha1
    case sha256
    case sha512
    /// SHA-512/256 (FIPS 180-4), the strongest algorithm of RFC 7616 Digest.
    case sha512_256

    /// Length of the digest in bytes.
    public var digestLength: Int {
        switch self {
        case .md5: 16
        case .sha1: 20
        case .sha256, .sha512_256: 32
        case .sha512: 64
        }
    }

    // Internal: HMAC shares the mapping.
    var evp: OpaquePointer? {
        switch self {
        case .md5: EVP_md5()
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        case .sha512_256: EVP_sha512_256()
        }
    }
}

/// One-shot hashing.
public enum Digest {
    /// The digest of `data` under `algorithm`.
    public static func hash(_ algorithm: HashAlgorithm, _ data: some Collection<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = Array(data).withUnsafeBytes { input in
            output.withUnsafeMutableBufferPointer { out in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &length, algorithm.evp, nil)
            }
        }
        // EVP_Digest fails only when OpenSSL cannot allocate or the algorithm is missing from
        // the provider; neither is recoverable and both mean the process is misconfigured.
        precondition(ok == 1, "OpenSSL EVP_Digest failed for \(algorithm)")
        return Array(output.prefix(Int(length)))
    }

    /// Whether the loaded OpenSSL providers compute `algorithm`: a FIPS-only configuration has
    /// no MD5, and `hash` must never be asked for what it cannot do.
    public static func isAvailable(_ algorithm: HashAlgorithm) -> Bool {
        availability[algorithm] ?? false
    }

    private static let availability: [HashAlgorithm: Bool] = Dictionary(uniqueKeysWithValues: HashAlgorithm.allCases.map { algorithm in
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let input: [UInt8] = [0]
        let ok = input.withUnsafeBytes { EVP_Digest($0.baseAddress, 1, &output, &length, algorithm.evp, nil) } == 1
        OpenSSLErrorQueue.clear()
        return (algorithm, ok)
    })

    /// The digest of the UTF-8 bytes of `string`.
    public static func hash(_ algorithm: HashAlgorithm, _ string: String) -> [UInt8] {
        hash(algorithm, Array(string.utf8))
    }
}

extension Array where Element == UInt8 {
    /// Lowercase hexadecimal, as Digest authentication and fingerprints print bytes.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
