import Foundation

/// The request a forwarded raw response answered.
public struct ForwardedRequest: Codable, Hashable, Sendable {
    /// The request method, such as `GET`.
    public var method: String
    /// The absolute `http` or `https` URL requested.
    public var url: String
    /// The request-target exactly as sent in the request line, when it is not the default:
    /// the path and query of `url` (origin-form); for a 407 the whole URL (absolute-form), or
    /// `host:port` for `CONNECT`. Digest hashes it as `uri`.
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
        guard url.utf8.count <= RawResponse.maximumURLLength, !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }),
            let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            throw CountersignError(.invalidField, "'request.url' must be an absolute http or https URL")
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard bare.utf8.count <= 253, !bare.contains("/") else {
            throw CountersignError(.invalidField, "'request.url' must name a host")
        }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        guard (1...65535).contains(port) else {
            throw CountersignError(.invalidField, "'request.url' has an invalid port")
        }
        var originForm = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { originForm += "?" + query }
        return ParsedURL(
            scheme: scheme,
            host: bare.lowercased(),
            port: port,
            authorityHost: bare.contains(":") ? "[\(bare)]" : bare,
            hasExplicitPort: components.port != nil,
            originForm: originForm
        )
    }

    func validatedMethod() throws -> String {
        guard !method.isEmpty, method.utf8.count <= 64, AuthenticationSyntax.isToken(method) else {
            throw CountersignError(.invalidField, "'request.method' must be an HTTP method, such as GET")
        }
        return method
    }

    /// The Digest `uri`: what the request line carried.
    func requestTarget(url: ParsedURL, throughProxy: Bool) throws -> String {
        if let requestTarget {
            guard !requestTarget.isEmpty, requestTarget.utf8.count <= RawResponse.maximumURLLength,
                requestTarget.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F })
            else {
                throw CountersignError(.invalidField, "'request.requestTarget' must be a request-target without spaces or control characters")
            }
            return requestTarget
        }
        guard throughProxy else { return url.originForm }
        let authority = url.authorityHost + ":" + String(url.port)
        if AuthenticationSyntax.equalsIgnoringASCIICase(method, "CONNECT") { return authority }
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
