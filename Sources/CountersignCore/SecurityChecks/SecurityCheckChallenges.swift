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

/// The name of a security check, as MobileFirst adapters define them (`PinCodeAttempts`,
/// `UserLogin`): the key of a challenge list, a handler's `securityCheck`, a path segment.
public enum SecurityCheckName {
    public static let maximumLength = 100

    private static let characters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-".utf8)

    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maximumLength && name.utf8.allSatisfy(characters.contains)
    }

    /// Throws `invalid_security_check_name` unless `name` is 1 to 100 of a-z A-Z 0-9 . _ -
    public static func validate(_ name: String, field: String) throws {
        guard isValid(name) else {
            let shown = name.utf8.count > 40 ? String(name.prefix(40)) + "..." : name
            throw CountersignError(
                .invalidSecurityCheckName,
                "'\(field)': security-check name '\(shown)' must be 1 to \(maximumLength) of a-z A-Z 0-9 . _ -"
            )
        }
    }
}

/// Limits on the JSON a security check carries: its challenge, and the failure and success
/// payloads clients report.
public enum SecurityCheckPayload {
    /// Largest payload of one check, in bytes of JSON text.
    public static let maximumBytes = 8 * 1024
    /// Deepest nesting of arrays and objects in one payload.
    public static let maximumDepth = 16

    /// Throws `security_check_payload_too_large` when `payload` is larger or deeper than allowed.
    public static func checkSize(_ payload: JSONValue, field: String) throws {
        guard payload.approximateSize <= maximumBytes else {
            throw CountersignError(.securityCheckPayloadTooLarge, "'\(field)' is larger than \(maximumBytes) bytes")
        }
        guard payload.depth <= maximumDepth else {
            throw CountersignError(.securityCheckPayloadTooLarge, "'\(field)' nests deeper than \(maximumDepth) levels")
        }
    }

    /// A failure or success payload: a JSON object within the limits.
    public static func validateReport(_ payload: JSONValue, field: String) throws {
        guard payload.objectValue != nil else {
            throw CountersignError(.invalidSecurityChecks, "'\(field)' must be a JSON object, as the server sent it (send {} when it sent nothing)")
        }
        try checkSize(payload, field: field)
    }

    /// The server's message in a failure payload (`{"failure": "Account blocked"}`), cut to 200
    /// characters for the admin listing; `nil` when the payload carries none.
    public static func failureMessage(in payload: JSONValue) -> String? {
        guard let text = payload["failure"]?.stringValue, !text.isEmpty else { return nil }
        let cleaned = String(text.unicodeScalars.filter { $0.properties.generalCategory != .control }.map(Character.init))
        return cleaned.count > 200 ? String(cleaned.prefix(200)) : cleaned
    }
}
