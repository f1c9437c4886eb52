/// A computed Digest answer: the `Authorization` (or `Proxy-Authorization`) field value and what
/// went into it.
///
/// `description` leaves the field value out: until its nonce expires it is as good as the
/// password for that request, so it should not reach logs by accident.
public struct DigestAuthorization: Sendable, Hashable, CustomStringConvertible {
    /// The complete field value, starting with `Digest `.
    public let headerValue: String
    /// The `response` parameter (the request-digest), lowercase hexadecimal.
    public let response: String
    /// The algorithm the response was computed with.
    public let algorithm: DigestAlgorithm
    /// The qop used, or `nil` in RFC 2069 mode (the challenge offered none).
    public let qop: DigestQop?
    /// The `nc` sent, or `nil` in RFC 2069 mode, where no nonce count is sent and the central
    /// counter for the nonce need not advance.
    public let nonceCount: UInt32?

    public var description: String {
        "DigestAuthorization(algorithm: \(algorithm), qop: \(qop?.rawValue ?? "none"), nc: \(nonceCount.map(String.init) ?? "none"))"
    }
}
