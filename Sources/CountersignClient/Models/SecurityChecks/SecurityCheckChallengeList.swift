/// The body of `POST /v1/sessions/{id}/security-checks`: the challenge list exactly as a
/// MobileFirst-style server sent it, each check by name with its challenge (`.null` or an object).
///
/// ```swift
/// SecurityCheckChallengeList(challenges: ["PinCodeAttempts": ["remainingAttempts": 2, "errorMsg": nil], "StepUp": nil])
/// ```
public struct SecurityCheckChallengeList: Codable, Hashable, Sendable {
    public var challenges: [String: JSONValue]

    public init(challenges: [String: JSONValue]) {
        self.challenges = challenges
    }
}
