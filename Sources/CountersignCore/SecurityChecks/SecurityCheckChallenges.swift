/// A challenge list as a MobileFirst-style server sends it: the security checks that guard a
/// resource, each named, each with its challenge (`null`, or an object such as
/// `{"remainingAttempts": 2, "errorMsg": null}`).
///
/// ```json
/// {"challenges": {"PinCodeAttempts": {"remainingAttempts": 2, "errorMsg": null}, "StepUp": null}}
/// ```
public struct SecurityCheckChallenges: Hashable, Sendable {
    /// The challenges by check name.
    public let challenges: [String: JSONValue]

    /// Most checks one list may name. MobileFirst resources are guarded by a scope of a few
    /// checks; a list of hundreds is a client bug, not a challenge.
    public static let maximumChecks = 32

    /// Checks `challenges` (the value of the `challenges` member) and keeps it.
    public init(validating challenges: JSONValue) throws {
        guard case .object(let members) = challenges else {
            throw CountersignError(.invalidSecurityChecks, "'challenges' must be an object of security-check names to challenges")
        }
        guard !members.isEmpty else {
            throw CountersignError(.invalidSecurityChecks, "'challenges' must name at least one security check")
        }
        guard members.count <= Self.maximumChecks else {
            throw CountersignError(.tooManySecurityChecks, "'challenges' names \(members.count) security checks; at most \(Self.maximumChecks)")
        }
        for name in members.keys.sorted() {
            try SecurityCheckName.validate(name, field: "challenges")
            let challenge = members[name]!
            guard challenge.isNull || challenge.objectValue != nil else {
                throw CountersignError(.invalidSecurityChecks, "'challenges.\(name)' must be an object or null")
            }
            try SecurityCheckPayload.checkSize(challenge, field: "challenges.\(name)")
        }
        self.challenges = members
    }

    /// The check names, sorted: the order in which they are decided.
    public var names: [String] { challenges.keys.sorted() }

    /// The `remainingAttempts` a challenge carries, as MobileFirst's
    /// `CredentialsValidationSecurityCheck` sends it; `nil` when it carries none (or not an integer).
    public static func remainingAttempts(in challenge: JSONValue) -> Int? {
        guard let value = challenge["remainingAttempts"]?.integerValue, value >= Int64(Int32.min), value <= Int64(Int32.max) else { return nil }
        return Int(value)
    }
}
