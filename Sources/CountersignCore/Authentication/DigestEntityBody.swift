/// The request's entity-body, for Digest `qop=auth-int` (RFC 7616 §3.4.3), which hashes it
/// into the response.
///
/// A client that does not want to forward the body may send its hash instead, but it must then
/// use the hash function of the challenge that will be answered, which it can only know when the
/// response carries a single Digest challenge; sending the bytes always works.
public enum DigestEntityBody: Sendable, Hashable {
    /// The body exactly as sent (after any transfer coding is removed; before content coding is
    /// removed, as RFC 7616 hashes the message body). Empty for a request without a body.
    case bytes([UInt8])
    /// `H(entity-body)`: the body's hash under `algorithm`, in hexadecimal (either case).
    case hash(DigestHashAlgorithm, hex: String)
}

extension DigestEntityBody {
    /// Whether `H(entity-body)` can be had under `algorithm`: from the bytes always, from a hash
    /// only under its own algorithm.
    public func hashes(under algorithm: DigestHashAlgorithm) -> Bool {
        switch self {
        case .bytes: true
        case .hash(let own, _): own == algorithm
        }
    }
}
