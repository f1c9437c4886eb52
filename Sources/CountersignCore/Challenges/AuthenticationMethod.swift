/// An authentication method, spelt as Apple's clients spell it
/// (`NSURLAuthenticationMethodHTTPBasic`, ...).
///
/// A struct over the string rather than an enum: a client may forward a method this version
/// does not know, and the answer to that is `performDefaultHandling`, never an error.
public struct AuthenticationMethod: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    public static let `default` = Self(rawValue: "NSURLAuthenticationMethodDefault")
    public static let httpBasic = Self(rawValue: "NSURLAuthenticationMethodHTTPBasic")
    public static let httpDigest = Self(rawValue: "NSURLAuthenticationMethodHTTPDigest")
    public static let htmlForm = Self(rawValue: "NSURLAuthenticationMethodHTMLForm")
    public static let ntlm = Self(rawValue: "NSURLAuthenticationMethodNTLM")
    public static let negotiate = Self(rawValue: "NSURLAuthenticationMethodNegotiate")
    public static let clientCertificate = Self(rawValue: "NSURLAuthenticationMethodClientCertificate")
    public static let serverTrust = Self(rawValue: "NSURLAuthenticationMethodServerTrust")

    public static let known: [Self] = [.default, .httpBasic, .httpDigest, .htmlForm, .ntlm, .negotiate, .clientCertificate, .serverTrust]

    public var isKnown: Bool { Self.known.contains(self) }

    /// Methods whose answer holds for every task of a session once given: the TLS ones, and
    /// NTLM and Negotiate, which authenticate a connection rather than a request.
    public var isSessionWide: Bool {
        self == .serverTrust || self == .clientCertificate || self == .ntlm || self == .negotiate
    }

    /// Methods answered with a user name and password.
    public var usesPassword: Bool {
        self == .default || self == .httpBasic || self == .httpDigest || self == .htmlForm || self == .ntlm || self == .negotiate
    }

    /// `Default` is what URLSession reports for Basic over HTTP(S); both are treated as Basic.
    public func normalized(forProtocol protocolName: String?) -> Self {
        if self == .default, let protocolName, ["http", "https"].contains(protocolName.lowercased()) {
            return .httpBasic
        }
        return self
    }
}
