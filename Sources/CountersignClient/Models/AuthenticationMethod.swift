/// An authentication method, spelt as Apple's clients spell it (`NSURLAuthenticationMethodHTTPBasic`, ...).
///
/// An open set, as in the service's contract: a challenge may carry a method this version does not
/// know (the service answers it `performDefaultHandling`), and a later service may name new ones.
public struct AuthenticationMethod: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
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

    /// Methods whose answer holds for the whole session once given: the TLS ones, and NTLM and
    /// Negotiate, which authenticate a connection rather than a request.
    public var isSessionWide: Bool {
        self == .serverTrust || self == .clientCertificate || self == .ntlm || self == .negotiate
    }
}
