/// The hash of a request body, for Digest `qop=auth-int` without forwarding the body itself.
public struct ForwardedBodyHash: Codable, Hashable, Sendable {
    /// The hash of the Digest challenge that will be answered.
    public var algorithm: Algorithm
    /// The hash in hexadecimal.
    public var value: String

    public init(algorithm: Algorithm, value: String) {
        self.algorithm = algorithm
        self.value = value
    }

    /// The hashes Digest uses (RFC 7616).
    public enum Algorithm: String, Codable, Hashable, Sendable, CaseIterable {
        case md5 = "MD5"
        case sha256 = "SHA-256"
        case sha512_256 = "SHA-512-256"
    }
}
