/// The name of a security check, as MobileFirst adapters define them (`PinCodeAttempts`,
/// `UserLogin`): the key of a challenge list, a handler's `securityCheck`, a path segment.
public enum SecurityCheckName {
    public static let maximumLength = 100

    private static let characters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-".utf8)

    /// What a name is made of, as errors say it.
    public static let rule = "1 to \(maximumLength) of a-z A-Z 0-9 . _ -, other than . and .."

    /// `.` and `..` are refused: a report's URL names the check as a path segment, and clients
    /// that normalise URLs fold those two away, so such a check could never be reported.
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maximumLength && name.utf8.allSatisfy(characters.contains) && name != "." && name != ".."
    }

    /// Throws `invalid_security_check_name` unless `name` keeps to `rule`.
    public static func validate(_ name: String, field: String) throws {
        guard isValid(name) else {
            let shown = name.utf8.count > 40 ? String(name.prefix(40)) + "..." : name
            throw CountersignError(
                .invalidSecurityCheckName,
                "'\(field)': security-check name '\(shown)' must be \(rule)"
            )
        }
    }
}
