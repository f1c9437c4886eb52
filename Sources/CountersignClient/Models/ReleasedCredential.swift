public import Foundation

/// The credential a decision releases: the only place a secret ever leaves the service.
///
/// The contract defines `password` today (`user`, `password`, NTLM `domain`). Client identities
/// are released as a PKCS#12 protected by a one-time passphrase returned beside it; this type reads
/// them as `kind` `clientIdentity` with `pkcs12` (base64) and `passphrase`. A kind this version
/// does not know decodes with its `kind` and no secret, and the delegate falls back for it.
///
/// Printing, interpolating or `dump`ing a value never shows a secret.
public struct ReleasedCredential: Codable, Hashable, Sendable {
    public var kind: Kind
    public var user: String?
    /// Secret.
    public var password: String?
    /// The NTLM account domain.
    public var domain: String?
    /// Secret: a client identity as PKCS#12 (DER).
    public var pkcs12: Data?
    /// Secret: the one-time passphrase of ``pkcs12``.
    public var passphrase: String?

    public init(kind: Kind, user: String? = nil, password: String? = nil, domain: String? = nil, pkcs12: Data? = nil, passphrase: String? = nil) {
        self.kind = kind
        self.user = user
        self.password = password
        self.domain = domain
        self.pkcs12 = pkcs12
        self.passphrase = passphrase
    }

    /// A password credential.
    public static func password(user: String, password: String, domain: String? = nil) -> Self {
        Self(kind: .password, user: user, password: password, domain: domain)
    }

    /// The kind of credential. Open: kinds a later service adds decode as themselves.
    public struct Kind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        public static let password = Self(rawValue: "password")
        public static let clientIdentity = Self(rawValue: "clientIdentity")
        /// Trust the chain the server presented (`URLCredential(trust:)`); the answer's
        /// `evaluation` says why.
        public static let serverTrust = Self(rawValue: "serverTrust")
    }

    enum CodingKeys: String, CodingKey {
        case kind, user, password, domain, pkcs12, passphrase
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(Kind.self, forKey: .kind)
        user = try container.decodeIfPresent(String.self, forKey: .user)
        password = try container.decodeIfPresent(String.self, forKey: .password)
        domain = try container.decodeIfPresent(String.self, forKey: .domain)
        pkcs12 = try container.decodeIfPresent(Data.self, forKey: .pkcs12)
        passphrase = try container.decodeIfPresent(String.self, forKey: .passphrase)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        if kind == .password {
            // The contract's password credential has every member, `domain` null when absent.
            try container.encode(user ?? "", forKey: .user)
            try container.encode(password ?? "", forKey: .password)
            try container.encode(domain, forKey: .domain)
        } else {
            try container.encodeIfPresent(user, forKey: .user)
            try container.encodeIfPresent(password, forKey: .password)
            try container.encodeIfPresent(domain, forKey: .domain)
        }
        try container.encodeIfPresent(pkcs12, forKey: .pkcs12)
        try container.encodeIfPresent(passphrase, forKey: .passphrase)
    }
}

// A released credential carries a secret: printing it, on purpose or by string interpolation into
// a log line, or dumping it in a debugger, must not show it.
extension ReleasedCredential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "ReleasedCredential(\(kind), user: \(user ?? "nil"), secret: redacted)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["kind": kind.rawValue, "user": user as Any, "domain": domain as Any, "secret": "redacted"], displayStyle: .struct)
    }
}
