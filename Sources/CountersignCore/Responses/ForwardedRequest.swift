import Foundation

/// The request a forwarded raw response answered.
public struct ForwardedRequest: Codable, Hashable, Sendable {
    /// The request method, such as `GET`.
    public var method: String
    /// The absolute `http` or `https` URL requested.
    public var url: String
    /// The request-target exactly as sent in the request line, when it is not the default:
    /// the path and query of `url` (origin-form); for a 407 the whole URL (absolute-form), or
    /// `host:port` for `CONNECT` and for an https URL, which is reached through a `CONNECT`
    /// tunnel. Digest hashes it as `uri`.
    public var requestTarget: String?
    /// The request body, base64, for a Digest challenge that allows only `qop=auth-int`.
    public var body: String?
    /// Instead of `body`: its hash under the algorithm of the challenge that will be answered.
    public var bodyHash: ForwardedBodyHash?

    public init(method: String, url: String, requestTarget: String? = nil, body: String? = nil, bodyHash: ForwardedBodyHash? = nil) {
        self.method = method
        self.url = url
        self.requestTarget = requestTarget
        self.body = body
        self.bodyHash = bodyHash
    }

    /// The parts of `url` answering needs.
    struct ParsedURL {
        var scheme: String
        var host: String
        var port: Int
        /// `host` as written in a URL authority: IPv6 addresses in brackets.
        var authorityHost: String
        var hasExplicitPort: Bool
        /// Path (at least `/`) and query, percent-encoded as sent.
        var originForm: String
    }

    func parsedURL() throws -> ParsedURL {
        // A backslash is no URL character (RFC 3986): WHATWG parsers, browsers' among them, read
        // it as `/`, so `https://evil.example\@intranet.example.com/` is a request to
        // evil.example to them and to intranet.example.com to Foundation. Whose host it named is
        // not for the service to guess when a credential goes to it.
        guard !url.utf8.contains(UInt8(ascii: "\\")) else {
            throw CountersignError(.invalidField, "'request.url' must not contain a backslash: percent-encode it (%5C)")
        }
        // Non-ASCII characters percent-encoded first: Foundation refuses some in a host and maps
        // others (IDNA: `Ⅸ` becomes `ix`), where a challenge's host is taken as written.
        guard url.utf8.count <= RawResponse.maximumURLLength else {
            throw CountersignError(.invalidField, "'request.url' is longer than \(RawResponse.maximumURLLength) bytes")
        }
        guard !Self.hasSpaceOrControl(url),
            let components = URLComponents(string: Self.percentEncodingNonASCII(url)), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            throw CountersignError(.invalidField, "'request.url' must be an absolute http or https URL")
        }
        // Checked as a challenge's host is, after the percent-decoding URLComponents does: the
        // decoded host is what is recorded and matched.
        guard ProtectionSpace.isHostName(host) else {
            throw CountersignError(.invalidField, "'request.url' must name a host: a host name or address")
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        // URLComponents has no port for digits it cannot hold in an Int: not the default port.
        let portOverflows = components.port == nil && components.rangeOfPort.map { !$0.isEmpty } == true
        guard (1...65535).contains(port), !portOverflows else {
            throw CountersignError(.invalidField, "'request.url' has an invalid port")
        }
        let originForm = Self.originForm(ofURL: Self.percentEncodingNonASCII(url))
        // IPv6 addresses in brackets, as challenges, credentials and rules write them.
        let authorityHost = bare.contains(":") ? "[\(bare)]" : bare
        return ParsedURL(
            scheme: scheme,
            host: authorityHost.lowercased(),
            port: port,
            authorityHost: authorityHost,
            hasExplicitPort: components.port != nil,
            originForm: originForm
        )
    }

    /// Path (at least `/`) and query as `url` writes them, as the request line carried them:
    /// URLComponents re-encodes some characters (`|` as `%7C`, a stray `%` as `%25`), and a
    /// Digest `uri` that differs from the request line is refused by strict servers.
    static func originForm(ofURL text: String) -> String {
        let afterScheme = text.range(of: "://").map { text[$0.upperBound...] } ?? Substring(text)
        let withoutFragment = afterScheme.prefix { $0 != "#" }
        guard let start = withoutFragment.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let target = withoutFragment[start...]
        return target.hasPrefix("?") ? "/" + target : String(target)
    }

    private static func percentEncodingNonASCII(_ text: String) -> String {
        guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { return text }
        var encoded = ""
        for byte in text.utf8 {
            if byte < 0x80 {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(byte, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    /// A space, or a C0 or C1 control character: none belongs in a URL or request-target.
    private static func hasSpaceOrControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value <= 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    func validatedMethod() throws -> String {
        guard !method.isEmpty, method.utf8.count <= 64, AuthenticationSyntax.isToken(method) else {
            throw CountersignError(.invalidField, "'request.method' must be an HTTP method, such as GET")
        }
        return method
    }

    /// Whether a proxy's 407 answered the `CONNECT` that opens a tunnel to an https origin,
    /// not the method the client forwards: that one went to the origin, through the tunnel,
    /// and the proxy never saw it. An explicit `requestTarget` says what was sent instead.
    func isTunnelRequest(url: ParsedURL, throughProxy: Bool) -> Bool {
        throughProxy && requestTarget == nil && url.scheme == "https"
    }

    /// The Digest `method`: `CONNECT` for a tunnel's 407, else the forwarded method.
    func digestMethod(url: ParsedURL, throughProxy: Bool) throws -> String {
        let method = try validatedMethod()
        return isTunnelRequest(url: url, throughProxy: throughProxy) ? "CONNECT" : method
    }

    /// The Digest `uri`: what the request line carried.
    func requestTarget(url: ParsedURL, throughProxy: Bool) throws -> String {
        if let requestTarget {
            guard !requestTarget.isEmpty, requestTarget.utf8.count <= RawResponse.maximumURLLength, !Self.hasSpaceOrControl(requestTarget) else {
                throw CountersignError(.invalidField, "'request.requestTarget' must be a request-target without spaces or control characters")
            }
            return requestTarget
        }
        guard throughProxy else { return url.originForm }
        let authority = url.authorityHost + ":" + String(url.port)
        if AuthenticationSyntax.equalsIgnoringASCIICase(method, "CONNECT") || isTunnelRequest(url: url, throughProxy: throughProxy) { return authority }
        let port = url.hasExplicitPort ? ":" + String(url.port) : ""
        return "\(url.scheme)://\(url.authorityHost)\(port)\(url.originForm)"
    }

    func entityBody() throws -> DigestEntityBody? {
        switch (body, bodyHash) {
        case (.some, .some):
            throw CountersignError(.invalidField, "send 'request.body' or 'request.bodyHash', not both")
        case (.some(let body), nil):
            guard let data = Data(base64Encoded: body) else {
                throw CountersignError(.invalidField, "'request.body' must be base64")
            }
            return .bytes([UInt8](data))
        case (nil, .some(let hash)):
            return try hash.entityBody()
        case (nil, nil):
            return nil
        }
    }
}
