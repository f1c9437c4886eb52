public import Foundation

/// A forwarded raw response, checked, with what answering it needs: the parsed challenges, the
/// server (or proxy) they came from, and the request the answer is for.
public struct RawResponseContext: Sendable, Hashable {
    /// The origin server or proxy that sent the response.
    public struct Target: Sendable, Hashable {
        /// Lowercase host name or address (IPv6 without brackets).
        public var host: String
        public var port: Int
        /// `http` or `https` (for a proxy: its type).
        public var protocolName: String
        public var isProxy: Bool

        public init(host: String, port: Int, protocolName: String, isProxy: Bool) {
            self.host = host.lowercased()
            self.port = port
            self.protocolName = protocolName.lowercased()
            self.isProxy = isProxy
        }
    }

    public var taskId: String
    public var status: Int
    /// Every challenge of every challenge field, in the server's order; empty for a 403.
    public var challenges: [AuthenticationChallenge]
    public var target: Target
    /// The request method, as sent.
    public var method: String
    /// The request-target as sent in the request line: Digest's `uri`.
    public var requestTarget: String
    /// The body (or its hash), for `qop=auth-int`.
    public var entityBody: DigestEntityBody?
    public var previousDecisionId: UUID?
    /// Whether the request may have carried a header Countersign issued (``RawResponse/carriedHeader``).
    public var carriedHeader: Bool

    init(
        taskId: String,
        status: Int,
        challenges: [AuthenticationChallenge],
        target: Target,
        method: String,
        requestTarget: String,
        entityBody: DigestEntityBody?,
        previousDecisionId: UUID?,
        carriedHeader: Bool
    ) {
        self.taskId = taskId
        self.status = status
        self.challenges = challenges
        self.target = target
        self.method = method
        self.requestTarget = requestTarget
        self.entityBody = entityBody
        self.previousDecisionId = previousDecisionId
        self.carriedHeader = carriedHeader
    }

    /// `Authorization` for a 401, `Proxy-Authorization` for a 407.
    public var authorizationFieldName: String { target.isProxy ? "Proxy-Authorization" : "Authorization" }

    /// The protection space of a challenge of `scheme` in `realm` from this response's server.
    public func protectionSpace(scheme: AuthenticationScheme, realm: String?) -> ProtectionSpace {
        let method = Self.method(for: scheme)
        // NTLM and Negotiate authenticate connections; whatever realm they carry names nothing.
        let spaceRealm = method == .ntlm || method == .negotiate ? nil : realm
        return ProtectionSpace(
            host: target.host,
            port: target.port,
            protocolName: target.protocolName,
            realm: spaceRealm,
            authenticationMethod: method,
            isProxy: target.isProxy,
            proxyType: target.isProxy ? target.protocolName : nil,
            // Apple's meaning: the password itself does not cross the wire in the clear.
            receivesCredentialSecurely: target.protocolName == "https" || method == .httpDigest
        )
    }

    /// The authentication method Apple's clients give challenges of `scheme`. Schemes they have
    /// no method for get a name of their own, which no rule or credential can match.
    public static func method(for scheme: AuthenticationScheme) -> AuthenticationMethod {
        switch scheme {
        case .basic: .httpBasic
        case .digest: .httpDigest
        case .ntlm: .ntlm
        case .negotiate: .negotiate
        case .bearer, .other: AuthenticationMethod(rawValue: "HTTPScheme:" + String(scheme.name.prefix(64)))
        }
    }
}
