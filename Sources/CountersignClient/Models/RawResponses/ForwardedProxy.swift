/// The proxy that answered a request with 407 (or 403): the protection space of its challenge.
public struct ForwardedProxy: Codable, Hashable, Sendable {
    public var host: String
    public var port: Int
    /// How the client talks to the proxy; the service takes `http` when absent.
    public var type: Kind?

    public init(host: String, port: Int, type: Kind? = nil) {
        self.host = host
        self.port = port
        self.type = type
    }

    /// `http` or `https`.
    public enum Kind: String, Codable, Hashable, Sendable, CaseIterable {
        case http
        case https
    }
}
