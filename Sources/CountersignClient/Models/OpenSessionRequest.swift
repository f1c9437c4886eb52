/// The body of `POST /v1/sessions`.
public struct OpenSessionRequest: Codable, Hashable, Sendable {
    /// The client's own stable name for itself (1 to 200 characters).
    public var clientId: String
    public var label: String?
    /// Lifetime; the tenant's policy gives the default and the maximum.
    public var ttlSeconds: Int?

    public init(clientId: String, label: String? = nil, ttlSeconds: Int? = nil) {
        self.clientId = clientId
        self.label = label
        self.ttlSeconds = ttlSeconds
    }
}
