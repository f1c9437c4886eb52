/// The hash of a request body, for Digest `qop=auth-int` without forwarding the body itself.
public struct ForwardedBodyHash: Codable, Hashable, Sendable {
    /// `MD5`, `SHA-256` or `SHA-512-256`: the hash of the Digest challenge that will be answered.
    public var algorithm: String
    /// The hash in hexadecimal.
    public var value: String

    public init(algorithm: String, value: String) {
        self.algorithm = algorithm
        self.value = value
    }

    func entityBody() throws -> DigestEntityBody {
        guard let hash = DigestHashAlgorithm.allCases.first(where: { AuthenticationSyntax.equalsIgnoringASCIICase($0.name, algorithm) }) else {
            throw CountersignError(.invalidEnumValue, "'request.bodyHash.algorithm' must be one of MD5, SHA-256, SHA-512-256")
        }
        guard value.utf8.count == hash.digestLength * 2, value.utf8.allSatisfy({ $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit }) else {
            throw CountersignError(.invalidField, "'request.bodyHash.value' must be \(hash.digestLength * 2) hexadecimal digits")
        }
        return .hash(hash, hex: value)
    }
}
