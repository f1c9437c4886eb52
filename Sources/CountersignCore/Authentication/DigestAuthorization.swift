/// A computed Digest answer: the `Authorization` (or `Proxy-Authorization`) field value and what
/// went into it.
///
/// `description` and the mirror leave the field value and the response out: until its nonce
/// expires either is as good as the password for that request, so neither should reach logs or a
/// debugger's dump by accident.
public struct DigestAuthorization: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
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

    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["headerValue": "redacted", "response": "redacted", "algorithm": algorithm, "qop": qop as Any, "nonceCount": nonceCount as Any],
            displayStyle: .struct
        )
    }
}
