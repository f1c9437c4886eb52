/// The body of `POST /v1/sessions/{id}/credentials`: a credential the client obtained itself.
public struct SubmitCredentialRequest: Codable, Hashable, Sendable {
    public var protectionSpace: ProtectionSpace
    public var user: String
    /// Secret.
    public var password: String
    public var domain: String?
    public var persistence: Persistence

    public init(protectionSpace: ProtectionSpace, user: String, password: String, domain: String? = nil, persistence: Persistence) {
        self.protectionSpace = protectionSpace
        self.user = user
        self.password = password
        self.domain = domain
        self.persistence = persistence
    }
}

// The password must not show when the request is printed or dumped.
extension SubmitCredentialRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SubmitCredentialRequest(user: \(user), persistence: \(persistence.rawValue), password: redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["protectionSpace": protectionSpace, "user": user, "domain": domain as Any, "persistence": persistence, "password": "redacted"], displayStyle: .struct)
    }
}
