// URLRequest lives in FoundationNetworking on Linux, in Foundation elsewhere.
#if canImport(FoundationNetworking)
public import FoundationNetworking
#else
public import Foundation
#endif

/// The header a ``ResponseAnswer`` tells the client to add before sending the request again:
/// `Authorization` for a 401, `Proxy-Authorization` for a 407.
///
/// The value is a secret: a Basic value is the password in base64, and a Digest value proves the
/// password for its nonce. Printing, interpolating or `dump`ing the header never shows it; only
/// ``value`` and ``apply(to:)`` give it out.
public struct AuthorizationHeader: Codable, Hashable, Sendable {
    /// `Authorization` or `Proxy-Authorization`.
    public var name: Name
    /// Secret: the complete field value, such as `Digest username="...", ..., response="..."`.
    public var value: String

    public init(name: Name, value: String) {
        self.name = name
        self.value = value
    }

    /// Sets the header on `request`, replacing any value it had.
    public func apply(to request: inout URLRequest) {
        request.setValue(value, forHTTPHeaderField: name.rawValue)
    }

    /// The header's name. Open: names a later service adds decode as themselves.
    public struct Name: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The answer to an origin server's 401.
        public static let authorization = Self(rawValue: "Authorization")
        /// The answer to a proxy's 407.
        public static let proxyAuthorization = Self(rawValue: "Proxy-Authorization")

        static let known: [Self] = [.authorization, .proxyAuthorization]
    }
}

// The value is as good as the password (Basic) or as the password for one nonce (Digest): neither
// may reach a log line or a debugger's dump by accident.
extension AuthorizationHeader: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "\(name): redacted" }
    public var debugDescription: String { "AuthorizationHeader(\(name): redacted)" }
    public var customMirror: Mirror { Mirror(self, children: ["name": name.rawValue, "value": "redacted"], displayStyle: .struct) }
}
