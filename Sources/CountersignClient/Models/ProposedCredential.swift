/// The credential a client proposes with a challenge: who, and whether it had a password.
/// There is deliberately no room for the password itself.
public struct ProposedCredential: Codable, Hashable, Sendable {
    public var user: String?
    public var hasPassword: Bool?

    public init(user: String?, hasPassword: Bool? = nil) {
        self.user = user
        self.hasPassword = hasPassword
    }
}
