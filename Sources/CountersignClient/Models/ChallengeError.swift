/// The error a client's stack attached to a challenge (`URLAuthenticationChallenge.error`).
public struct ChallengeError: Codable, Hashable, Sendable {
    public var domain: String?
    public var code: Int?
    public var message: String?

    public init(domain: String? = nil, code: Int? = nil, message: String? = nil) {
        self.domain = domain
        self.code = code
        self.message = message
    }
}
