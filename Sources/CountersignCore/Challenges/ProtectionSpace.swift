/// Where a challenge comes from (`URLProtectionSpace`).
public struct ProtectionSpace: Codable, Hashable, Sendable {
    public var host: String
    public var port: Int
    /// `http`, `https`, `ftp`, ... (`protocol` in JSON).
    public var protocolName: String?
    public var realm: String?
    public var authenticationMethod: AuthenticationMethod
    /// A proxy asked (407), not the origin server. Proxies and origins never share credentials
    /// or counters.
    public var isProxy: Bool
    /// `http`, `https`, `socks`, ... for proxies.
    public var proxyType: String?
    public var receivesCredentialSecurely: Bool?
    /// For client-certificate challenges: the server's acceptable issuers, DER, base64.
    public var distinguishedNames: [String]?
    /// For server-trust challenges: the server's chain as received, DER, base64, leaf first.
    public var serverTrust: ServerTrustInput?

    public init(
        host: String,
        port: Int,
        protocolName: String? = nil,
        realm: String? = nil,
        authenticationMethod: AuthenticationMethod,
        isProxy: Bool = false,
        proxyType: String? = nil,
        receivesCredentialSecurely: Bool? = nil,
        distinguishedNames: [String]? = nil,
        serverTrust: ServerTrustInput? = nil
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
        distinguishedNames = try container.decodeIfPresent([String].self, forKey: .distinguishedNames)
        serverTrust = try container.decodeIfPresent(ServerTrustInput.self, forKey: .serverTrust)
    }

    /// The method with `Default` folded into Basic for HTTP(S), a proxy's type included.
    public var method: AuthenticationMethod { authenticationMethod.normalized(forProtocol: scheme) }

    /// The protocol the space speaks, lower-cased. Apple's proxy spaces
    /// (`URLProtectionSpace(proxyHost:port:type:...)`) have a nil `protocol` and carry it in
    /// `proxyType`, where a forwarded raw 407 names it in both: read from `protocol` alone, one
    /// proxy had two keys (two counters, two memories), and a rule or credential for its
    /// protocol, or `Default` as Basic, fitted only one of them.
    var scheme: String? {
        (protocolName ?? (isProxy ? proxyType : nil))?.lowercasedIfNeeded
    }

    /// The port, with Apple's 0 ("the default port for the protocol") read as that port: port 0
    /// over https is port 443, to rules, credentials, counters and session memory alike.
    var effectivePort: Int { Self.effectivePort(port, scheme: scheme) }

    /// `port`, or the default port of `scheme` (lower-cased) for Apple's 0.
    static func effectivePort(_ port: Int, scheme: String?) -> Int {
        guard port == 0, let scheme, let defaultPort = defaultPorts[scheme] else { return port }
        return defaultPort
    }

    /// The default port of each protocol and proxy type Apple names (`NSURLProtectionSpaceHTTP`,
    /// ..., `NSURLProtectionSpaceSOCKSProxy`).
    static let defaultPorts: [String: Int] = ["http": 80, "https": 443, "ftp": 21, "socks": 1080]

    /// The same space with case folded where case does not matter, so that equal spaces
    /// compare and key equal.
    public var normalized: ProtectionSpace {
        var space = self
        space.host = Self.foldedHost(host)
        space.protocolName = scheme
        space.port = effectivePort
        space.proxyType = proxyType?.lowercasedIfNeeded
        space.authenticationMethod = method
        return space
    }

    /// The identity of the space for counters and session memory: target, protocol, host,
    /// port, realm and method. TLS challenges ignore the realm, which they do not have.
    public var key: String {
        let method = self.method
        let realm = method == .serverTrust || method == .clientCertificate ? "" : (realm ?? "")
        var key = isProxy ? "proxy" : "origin"
        key.reserveCapacity(32 + host.utf8.count + realm.utf8.count + method.rawValue.utf8.count)
        func append(_ part: String) {
            key += "|"
            // Escaped so that no two spaces share a key: `%` first, then the separator.
            var plain = true
            for byte in part.utf8 where byte == UInt8(ascii: "%") || byte == UInt8(ascii: "|") {
                plain = false
                break
            }
            key += plain ? part : part.replacingAll("%", with: "%25").replacingAll("|", with: "%7C")
        }
        append(scheme ?? "")
        append(Self.foldedHost(host))
        append(String(effectivePort))
        append(realm)
        append(method.rawValue)
        return key
    }

    /// A host as rules, credentials, counters and session memory compare it: an internationalized
    /// name in its ASCII form (`asciiForm(ofHost:)`), case folded, the
    /// trailing dot of a fully qualified name dropped, and an IPv6 address in brackets.
    /// `www.bank.example.` is the host `www.bank.example` to DNS and to the trust evaluation
    /// (`VerificationHost`); kept, it slipped past every rule written for that host (a pinning
    /// rule, a refusal) to a looser one. An IPv6 address comes bracketed from a forwarded raw
    /// response's URL and may come bare from a client's protection space: one address, one host.
    public static func foldedHost(_ host: String) -> String {
        foldedHost(host, asciiForm: true)
    }

    /// `asciiForm: false` folds as releases before 0023 did, keeping an internationalized name
    /// as sent: how their rows may hold it (`CredentialAttributes.storedForms(ofHostAsSent:)`).
    static func foldedHost(_ host: String, asciiForm: Bool) -> String {
        let lowered = (asciiForm ? Self.asciiForm(ofHost: host) : host).lowercasedIfNeeded
        // Unbracketed, only an IPv6 address has a `:` (`HostShape`).
        if lowered.utf8.first != UInt8(ascii: "["), lowered.utf8.contains(UInt8(ascii: ":")) { return "[\(lowered)]" }
        // A host is never a lone dot, nor ends in two (`HostShape`).
        guard lowered.utf8.count > 1, lowered.utf8.last == UInt8(ascii: ".") else { return lowered }
        return String(lowered.dropLast())
    }

    /// The most bytes a space's `key` may take: it keys session memory and rejection counters in
    /// PostgreSQL, where one index entry holds at most about 2.7 KB.
    public static let maximumKeyBytes = 2048

    /// Whether `key` stays within `maximumKeyBytes`. The key is built only when its parts could
    /// take more: escaping (`%`, `|`) and case folding at most triple a part, the method included
    /// (any text a client names; `Default` becomes the longer `HTTPBasic`, within the slack).
    public var keyFits: Bool {
        let parts = host.utf8.count + (realm?.utf8.count ?? 0) + (scheme?.utf8.count ?? 0) + authenticationMethod.rawValue.utf8.count
        let bound = 48 + 3 * parts
        return bound <= Self.maximumKeyBytes || key.utf8.count <= Self.maximumKeyBytes
    }

    /// Whether `host` can name a host: 1 to 253 bytes, no whitespace, slash or control
    /// character, and the shape of a name or address (`HostShape`). Looks at bytes while the
    /// host is ASCII (it nearly always is) and at characters otherwise, where Unicode decides
    /// what whitespace is.
    static func isHostName(_ host: String) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 253, HostShape.isWellFormed(host.utf8) else { return false }
        var ascii = true
        for byte in host.utf8 {
            if byte >= 0x80 {
                ascii = false
                break
            }
            if byte == UInt8(ascii: "/") || byte <= 0x20 || byte == 0x7F { return false }
        }
        return ascii || !host.unicodeScalars.contains { $0 == "/" || $0.properties.isWhitespace || Validation.isControl($0) }
    }

    /// Checks the parts of a space a client sends.
    public func validate() throws {
        guard Self.isHostName(host) else {
            throw CountersignError(.invalidField, "'protectionSpace.host' must be a host name or address")
        }
        try Validation.range(port, 0...65535, field: "protectionSpace.port")
        if let realm { try Validation.text(realm, field: "protectionSpace.realm", maxLength: 1000) }
        guard authenticationMethod.rawValue.utf8.count <= 200 else {
            throw CountersignError(.invalidField, "'protectionSpace.authenticationMethod' is too long")
        }
        guard !Validation.containsControlCharacters(authenticationMethod.rawValue) else {
            throw CountersignError(.invalidField, "'protectionSpace.authenticationMethod' must not contain control characters")
        }
        if let protocolName { try Validation.name(protocolName, field: "protectionSpace.protocol", maxLength: 32) }
        if let proxyType { try Validation.name(proxyType, field: "protectionSpace.proxyType", maxLength: 32) }
        guard keyFits else {
            throw CountersignError(
                .invalidField,
                "'protectionSpace.realm' is too long for this space: protocol, host, realm and method together may take \(Self.maximumKeyBytes) bytes of UTF-8 (`%` and `|` count three)"
            )
        }
    }
}

/// The server's certificate chain as the client received it.
public struct ServerTrustInput: Codable, Hashable, Sendable {
    /// DER, base64, leaf first.
    public var certificates: [String]

    public init(certificates: [String]) {
        self.certificates = certificates
    }
}

extension String {
    /// The string lower-cased, without allocating when it already is (as hosts and schemes
    /// nearly always are).
    var lowercasedIfNeeded: String {
        for byte in utf8 where byte >= 0x80 || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) {
            return lowercased()
        }
        return self
    }

    /// Every `target` replaced, without Foundation.
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        guard contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
