/// A Digest "quality of protection" (RFC 7616 §3.3).
public enum DigestQop: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Authentication of the request method and target.
    case auth = "auth"
    /// Authentication of the method, target and entity-body.
    case authInt = "auth-int"

    public var description: String { rawValue }
}
