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

    /// OpenSSL's implementation of the algorithm, or `nil` when no loaded provider has it.
    /// Internal: HMAC shares it.
    var evp: OpaquePointer? { FetchedDigests.shared.implementations[self] }

    /// The name OpenSSL 3 fetches the algorithm by.
    fileprivate var openSSLName: String {
        switch self {
        case .md5: "MD5"
        case .sha1: "SHA1"
        case .sha256: "SHA256"
        case .sha512: "SHA512"
        case .sha512_256: "SHA512-256"
        }
    }
}

/// Each algorithm's implementation, fetched from OpenSSL's providers once. Handed a legacy
/// `EVP_sha256()`, OpenSSL 3 looks the implementation up again on every call (an implicit fetch,
/// under its store's lock), and every API-key check hashes.
///
/// `@unchecked Sendable`: the pointers are set in `init` and never changed or freed, and OpenSSL
/// allows a fetched algorithm to be used by any number of threads at once.
private final class FetchedDigests: @unchecked Sendable {
    static let shared = FetchedDigests()

    let implementations: [HashAlgorithm: OpaquePointer]

    private init() {
        var implementations: [HashAlgorithm: OpaquePointer] = [:]
        for algorithm in HashAlgorithm.allCases {
            implementations[algorithm] = EVP_MD_fetch(nil, algorithm.openSSLName, nil)
        }
        OpenSSLErrorQueue.clear()
        self.implementations = implementations
    }
}

/// One-shot hashing.
public enum Digest {
    /// The digest of `data` under `algorithm`.
    public static func hash(_ algorithm: HashAlgorithm, _ data: some Collection<UInt8>) -> [UInt8] {
        data.withContiguousStorageIfAvailable { hash(algorithm, bytes: UnsafeRawBufferPointer($0)) }
            ?? Array(data).withUnsafeBytes { hash(algorithm, bytes: $0) }
    }

    private static func hash(_ algorithm: HashAlgorithm, bytes input: UnsafeRawBufferPointer) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = output.withUnsafeMutableBufferPointer { out in
            EVP_Digest(input.baseAddress, input.count, out.baseAddress, &length, algorithm.evp, nil)
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
        var string = string
        return string.withUTF8 { hash(algorithm, bytes: UnsafeRawBufferPointer($0)) }
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
