public import Foundation

/// Everything the engine reads to decide one check.
public struct SecurityCheckInputs: Sendable {
    public var name: String
    /// The check's challenge as the server sent it (`null` or an object).
    public var challenge: JSONValue
    public var handler: SecurityCheckHandler?
    /// The client's state for the check once this challenge is taken into account.
    public var state: SecurityCheckState?
    /// The handler's credential, when it exists.
    public var credential: Credential?
    /// The credential's rejections for this check since its last success or change.
    public var credentialFailures: Int
    /// The credential's block, counted in any space: it is released nowhere while blocked.
    public var credentialBlockedUntil: Date?
    public var now: Date

    public init(
        name: String,
        challenge: JSONValue,
        handler: SecurityCheckHandler?,
        state: SecurityCheckState?,
        credential: Credential?,
        credentialFailures: Int,
        credentialBlockedUntil: Date?,
        now: Date
    ) {
        self.name = name
        self.challenge = challenge
        self.handler = handler
        self.state = state
        self.credential = credential
        self.credentialFailures = credentialFailures
        self.credentialBlockedUntil = credentialBlockedUntil
        self.now = now
    }
}
