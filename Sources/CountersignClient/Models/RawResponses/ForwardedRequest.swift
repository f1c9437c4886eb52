public import Foundation

/// The request a forwarded raw response answered: its method and URL, which the service needs for
/// the protection space and for Digest's `uri`.
///
/// Its description and mirror give the body's size, never the body.
public struct ForwardedRequest: Codable, Hashable, Sendable {
    /// The request method, such as `GET`.
    public var method: String
    /// The absolute `http` or `https` URL requested.
    public var url: String
    /// The request-target as sent in the request line, when it is not the default (the path and
    /// query of ``url``; for a 407 the whole URL, or `host:port` for `CONNECT`). Digest's `uri`.
    /// Without it, a 407 of an https URL is answered as the proxy's answer to the tunnel's
    /// `CONNECT`, the request URLSession sends the proxy for https.
    public var requestTarget: String?
    /// The request body, only for a Digest challenge that offers nothing but `qop=auth-int`.
    public var body: Data?
    /// Instead of ``body``: its hash under the algorithm of the challenge that will be answered.
    public var bodyHash: ForwardedBodyHash?

    public init(method: String, url: String, requestTarget: String? = nil, body: Data? = nil, bodyHash: ForwardedBodyHash? = nil) {
        self.method = method
        self.url = url
        self.requestTarget = requestTarget
        self.body = body
        self.bodyHash = bodyHash
    }
}

// A request body may hold anything the app sent (a form with a password): it never reaches a log
// line through this value.
extension ForwardedRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        var text = "\(method) \(url)"
        if let requestTarget { text += " (request-target \(requestTarget))" }
        if let body { text += ", body: \(body.count) bytes" }
        if let bodyHash { text += ", body hash: \(bodyHash.algorithm.rawValue)" }
        return text
    }

    public var debugDescription: String { "ForwardedRequest(\(description))" }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "method": method, "url": url, "requestTarget": requestTarget as Any,
                "body": body.map { "\($0.count) bytes, redacted" } as Any, "bodyHash": bodyHash as Any,
            ],
            displayStyle: .struct
        )
    }
}
