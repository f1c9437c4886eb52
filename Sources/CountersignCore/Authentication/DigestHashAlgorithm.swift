/// A hash function of HTTP Digest (RFC 7616 §3.3 and §6.1).
///
/// The core computes no hashes itself (it has no cryptography): ``DigestResponder`` is given a
/// function that hashes bytes with one of these.
public enum DigestHashAlgorithm: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// MD5 (RFC 1321). Broken for collisions; still the most deployed Digest algorithm.
    case md5
    /// SHA-256 (FIPS 180-4).
    case sha256
    /// SHA-512/256 (FIPS 180-4): SHA-512 with its own initial values, truncated to 256 bits.
    /// Not SHA-512 cut short: the initial values differ.
    case sha512_256

    /// The algorithm's name as RFC 7616 spells it in `algorithm=`.
    public var name: String {
        switch self {
        case .md5: "MD5"
        case .sha256: "SHA-256"
        case .sha512_256: "SHA-512-256"
        }
    }

    /// Length of a digest in bytes (twice that in hexadecimal on the wire).
    public var digestLength: Int {
        switch self {
        case .md5: 16
        case .sha256, .sha512_256: 32
        }
    }

    public var description: String { name }
}
