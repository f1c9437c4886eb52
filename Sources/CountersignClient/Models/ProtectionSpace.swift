public import Foundation

/// Where a challenge comes from (`URLProtectionSpace`), as the service's `ProtectionSpace` schema
/// spells it.
public struct ProtectionSpace: Codable, Hashable, Sendable {
    public var host: String
    public var port: Int
    /// `http`, `https`, `ftp`, ... (`protocol` in JSON).
    public var protocolName: String?
    public var realm: String?
    public var authenticationMethod: AuthenticationMethod
    /// A proxy asked (407), not the origin server.
    public var isProxy: Bool
    /// `http`, `https`, `socks`, ... for proxies.
    public var proxyType: String?
    public var receivesCredentialSecurely: Bool?
    /// Client-certificate challenges: the server's acceptable issuers, DER (base64 on the wire).
    public var distinguishedNames: [Data]?
    /// Server-trust challenges: the server's chain as received, DER, leaf first.
    public var serverTrust: ServerTrustChain?

    public init(
        host: String,
        port: Int,
        protocolName: String? = nil,
        realm: String? = nil,
        authenticationMethod: AuthenticationMethod,
        isProxy: Bool = false,
        proxyType: String? = nil,
        receivesCredentialSecurely: Bool? = nil,
        distinguishedNames: [Data]? = nil,
        serverTrust: ServerTrustChain? = nil
    ) {
        self.host = host
        self.port = port
        self.protocolName = protocolName
        self.realm = realm
        self.authenticationMethod = authenticationMethod
        self.isProxy = isProxy
        self.proxyType = proxyType
        self.receivesCredentialSecurely = receivesCredentialSecurely
        self.distinguishedNames = distinguishedNames
        self.serverTrust = serverTrust
    }

    enum CodingKeys: String, CodingKey {
        case host, port, realm, authenticationMethod, isProxy, proxyType, receivesCredentialSecurely, distinguishedNames, serverTrust
        case protocolName = "protocol"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        host = try container.decode(String.self, forKey: .host)
        port = try container.decode(Int.self, forKey: .port)
        protocolName = try container.decodeIfPresent(String.self, forKey: .protocolName)
        realm = try container.decodeIfPresent(String.self, forKey: .realm)
        authenticationMethod = try container.decode(AuthenticationMethod.self, forKey: .authenticationMethod)
        isProxy = try container.decodeIfPresent(Bool.self, forKey: .isProxy) ?? false
        proxyType = try container.decodeIfPresent(String.self, forKey: .proxyType)
        receivesCredentialSecurely = try container.decodeIfPresent(Bool.self, forKey: .receivesCredentialSecurely)
        distinguishedNames = try container.decodeIfPresent([Data].self, forKey: .distinguishedNames)
        serverTrust = try container.decodeIfPresent(ServerTrustChain.self, forKey: .serverTrust)
    }

    /// How this client tells spaces apart when it follows the credentials it handed to a task:
    /// origin or proxy, protocol, host, port, realm and method, folded as the service folds them.
    var ledgerKey: String {
        [isProxy ? "proxy" : "origin", protocolName?.lowercased() ?? "", Self.foldedHost(host), String(effectivePort), realm ?? "", authenticationMethod.rawValue]
            .joined(separator: "|")
    }

    /// The port, with Apple's 0 ("the default port for the protocol") read as that port, as the
    /// service reads it: a task's final response names the port its URL implies (443), so a
    /// credential given at port 0 would otherwise never be judged by its own server's 401.
    var effectivePort: Int {
        guard port == 0, let scheme = (protocolName ?? (isProxy ? proxyType : nil))?.lowercased(), let known = Self.defaultPorts[scheme] else {
            return port
        }
        return known
    }

    /// The default port of each protocol and proxy type Apple names.
    static let defaultPorts: [String: Int] = ["http": 80, "https": 443, "ftp": 21, "socks": 1080]

    /// A host as the service compares it: an internationalized name in its ASCII form (IDNA, as
    /// Foundation's `URL` gives it: `Bücher.example` is `xn--bcher-kva.example`), case folded,
    /// without a fully qualified name's trailing dot, an IPv6 address without its brackets (a
    /// protection space may bracket it where a response's URL does not, or the other way round).
    static func foldedHost(_ host: String) -> String {
        var folded = host
        if folded.utf8.contains(where: { $0 >= 0x80 }) {
            var components = URLComponents()
            components.host = folded
            // A name IDNA has no ASCII form for comes back percent-encoded: left as it is.
            if let encoded = components.encodedHost, !encoded.isEmpty, !encoded.contains("%") { folded = encoded }
        }
        folded = folded.lowercased()
        if folded.hasPrefix("["), folded.hasSuffix("]") { folded = String(folded.dropFirst().dropLast()) }
        if folded.count > 1, folded.hasSuffix(".") { folded.removeLast() }
        return folded
    }
}
