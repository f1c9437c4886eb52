public import Foundation

/// A stored credential as decisions and listings see it: everything but the secret.
public struct Credential: Hashable, Sendable {
    public var id: UUID
    public var tenantID: UUID
    public var kind: CredentialKind
    public var attributes: CredentialAttributes
    /// The NTLM account domain.
    public var domain: String?
    public var label: String?
    public var owner: CredentialOwner
    /// Bumped whenever the secret changes; a cached secret of another version is stale.
    public var secretVersion: Int
    public var createdAt: Date
    public var updatedAt: Date
    /// For a client identity: its certificate, as decisions choose and check it.
    public var certificate: IdentityCertificate?
    /// Whether its password may leave the service. When not, it only answers what the service
    /// computes itself: Digest headers of raw responses.
    public var exportable: Bool

    public init(
        id: UUID,
        tenantID: UUID,
        kind: CredentialKind,
        attributes: CredentialAttributes,
        domain: String?,
        label: String?,
        owner: CredentialOwner,
        secretVersion: Int,
        createdAt: Date,
        updatedAt: Date,
        certificate: IdentityCertificate? = nil,
        exportable: Bool = true
    ) {
        self.id = id
        self.tenantID = tenantID
        self.kind = kind
        self.attributes = attributes
        self.domain = domain
        self.label = label
        self.owner = owner
        self.secretVersion = secretVersion
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.certificate = certificate
        self.exportable = exportable
    }
}

public enum CredentialKind: String, StrictStringEnum {
    /// A user name and password (and an NTLM domain).
    case password
    /// A private key and its certificate chain, for TLS client authentication. Uploaded by
    /// admins (`/v1/identities`), released as a PKCS#12 under a one-time passphrase.
    case clientIdentity
}

/// Who a credential belongs to, which is also where it is remembered.
public enum CredentialOwner: Hashable, Sendable {
    /// Provisioned by an admin, or submitted by a client as `synchronizable`: the whole tenant.
    case tenant(submittedBy: String?)
    /// Submitted by a client as `permanent`: that clientId, across its sessions.
    case client(String)
    /// Submitted by a client as `forSession`: that session, until it ends.
    case session(UUID, clientID: String)

    /// Lower comes first when several credentials fit: the closest owner wins.
    var precedence: Int {
        switch self {
        case .session: 0
        case .client: 1
        case .tenant(submittedBy: .some): 2
        case .tenant(submittedBy: .none): 3
        }
    }

    /// The persistence a credential of this owner was stored with.
    public var persistence: Persistence {
        switch self {
        case .session: .forSession
        case .client: .permanent
        case .tenant: .synchronizable
        }
    }
}

/// The attributes a credential is keyed by, as a keychain internet password: host, security
/// domain (realm), account, path, port, protocol, authentication type, proxy or origin.
/// Attributes left out fit any value.
public struct CredentialAttributes: Codable, Hashable, Sendable {
    public var host: String
    public var port: Int?
    /// `protocol` in JSON.
    public var protocolName: String?
    public var realm: String?
    public var path: String?
    public var authenticationMethod: AuthenticationMethod?
    public var isProxy: Bool
    public var account: String

    public init(
        host: String,
        port: Int? = nil,
        protocolName: String? = nil,
        realm: String? = nil,
        path: String? = nil,
        authenticationMethod: AuthenticationMethod? = nil,
        isProxy: Bool = false,
        account: String
    ) {
        self.host = host
        self.port = port
        self.protocolName = protocolName
        self.realm = realm
        self.path = path
        self.authenticationMethod = authenticationMethod
        self.isProxy = isProxy
        self.account = account
    }

    enum CodingKeys: String, CodingKey {
        case host, port, realm, path, authenticationMethod, isProxy, account
        case protocolName = "protocol"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        host = try container.decode(String.self, forKey: .host)
        port = try container.decodeIfPresent(Int.self, forKey: .port)
        protocolName = try container.decodeIfPresent(String.self, forKey: .protocolName)
        realm = try container.decodeIfPresent(String.self, forKey: .realm)
        path = try container.decodeIfPresent(String.self, forKey: .path)
        authenticationMethod = try container.decodeIfPresent(AuthenticationMethod.self, forKey: .authenticationMethod)
        isProxy = try container.decodeIfPresent(Bool.self, forKey: .isProxy) ?? false
        account = try container.decode(String.self, forKey: .account)
    }

    /// The same attributes with case folded where the keychain ignores it, and the host and port
    /// as challenges are compared (`ProtectionSpace.foldedHost`, `effectivePort`).
    public var normalized: CredentialAttributes {
        var attributes = self
        attributes.host = ProtectionSpace.foldedHost(host)
        attributes.protocolName = protocolName?.lowercased()
        attributes.port = port.map { ProtectionSpace.effectivePort($0, scheme: attributes.protocolName) }
        attributes.authenticationMethod = authenticationMethod?.normalized(forProtocol: attributes.protocolName)
        return attributes
    }

    /// `host` (folded, `ProtectionSpace.foldedHost`) and the form a row saved before hosts were
    /// folded may hold it in, `host` first: rows saved before hosts were folded keep the host as
    /// sent (a fully qualified name's trailing dot, an IPv6 address without brackets) where
    /// migration 0018 found a twin, and instances of an earlier release still save it so during
    /// a rolling upgrade. Found by them, saving the same keychain key again updates that row in
    /// place rather than adding a second one.
    public static func storedForms(ofFoldedHost host: String) -> [String] {
        if host.utf8.first == UInt8(ascii: "["), host.utf8.last == UInt8(ascii: "]") { return [host, String(host.dropFirst().dropLast())] }
        return [host, host + "."]
    }

    /// The forms a row may hold `host`, as an admin or client sent it, in: those of its folded
    /// form, then, for an internationalized name, those of the name as sent, which rows saved
    /// before hosts took their ASCII form hold (migration 0023 is the first such release).
    public static func storedForms(ofHostAsSent host: String) -> [String] {
        let folded = storedForms(ofFoldedHost: ProtectionSpace.foldedHost(host))
        let asSent = ProtectionSpace.foldedHost(host, asciiForm: false)
        return asSent == folded[0] ? folded : folded + storedForms(ofFoldedHost: asSent)
    }

    /// The port 0 a row keyed by these normalized attributes may hold for `port`, the protocol's
    /// default port, as saved before port 0 was read as that port; `nil` for any other port.
    public var storedDefaultPort: Int? {
        guard let port, let protocolName, ProtectionSpace.defaultPorts[protocolName] == port else { return nil }
        return 0
    }

    /// The attributes a client-submitted credential gets from the space it was typed for.
    public init(space: ProtectionSpace, account: String) {
        let space = space.normalized
        self.init(
            host: space.host,
            port: space.port,
            protocolName: space.protocolName,
            realm: space.realm,
            authenticationMethod: space.method,
            isProxy: space.isProxy,
            account: account
        )
    }

    /// Whether this credential may answer a challenge from `space` (normalized).
    public func fits(_ space: ProtectionSpace) -> Bool {
        let attributes = normalized
        guard attributes.isProxy == space.isProxy, attributes.host == space.host else { return false }
        if let port = attributes.port, port != space.port { return false }
        if let protocolName = attributes.protocolName, protocolName != space.protocolName { return false }
        // No realm is the empty realm, as in the space's key (session memory, counters).
        if let realm, realm != space.realm ?? "" { return false }
        // Normalized for the space's protocol: a credential for `Default` without a protocol of
        // its own is an HTTP Basic one over http(s), as the challenge's `Default` is.
        if let method = attributes.authenticationMethod, method.normalized(forProtocol: space.protocolName) != space.method { return false }
        return true
    }

    /// How many optional attributes are pinned down: among fitting credentials of the same
    /// owner, the most specific wins.
    var specificity: Int {
        [port != nil, protocolName != nil, realm != nil, authenticationMethod != nil, path != nil].filter { $0 }.count
    }

    public func validate() throws {
        guard ProtectionSpace.isHostName(host), !host.utf8.contains(UInt8(ascii: "*")) else {
            throw CountersignError(.invalidField, "'host' must be a host name or address")
        }
        if let port { try Validation.range(port, 0...65535, field: "port") }
        if let protocolName { try Validation.name(protocolName, field: "protocol", maxLength: 32) }
        if let realm { try Validation.text(realm, field: "realm", maxLength: 1000) }
        if let path { try Validation.text(path, field: "path", maxLength: 2000) }
        if let authenticationMethod, !authenticationMethod.isKnown {
            throw CountersignError(.invalidField, "'authenticationMethod' is not an authentication method")
        }
        try Validation.name(account, field: "account", maxLength: 1000)
    }
}
