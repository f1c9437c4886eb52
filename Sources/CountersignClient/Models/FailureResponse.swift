/// Status and headers of the response that carried a challenge.
public struct FailureResponse: Codable, Hashable, Sendable {
    public var status: Int
    public var headers: [String: String]?

    public init(status: Int, headers: [String: String]? = nil) {
        self.status = status
        self.headers = headers
    }
}
