/// The proxy that answered a request with 407: the protection space of its challenge.
public struct ForwardedProxy: Codable, Hashable, Sendable {
    public var host: String
    public var port: Int
    /// `http` (the default) or `https`: how the client talks to the proxy. Kept as the space's
    /// `protocol` and `proxyType`, so proxy credentials pinned to a protocol still fit.
    public var type: String?

    public init(host: String, port: Int, type: String? = nil) {
        self.host = host
        self.port = port
        self.type = type
    }

    var protocolName: String { (type ?? "http").lowercased() }

    func validate() throws {
        guard ProtectionSpace.isHostName(host) else {
            throw CountersignError(.invalidField, "'proxy.host' must be a host name or address")
        }
        try Validation.range(port, 1...65535, field: "proxy.port")
        guard ["http", "https"].contains(protocolName) else {
            throw CountersignError(.invalidEnumValue, "'proxy.type' must be one of http, https")
        }
    }
}
