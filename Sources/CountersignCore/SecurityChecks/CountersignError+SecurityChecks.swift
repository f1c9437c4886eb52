extension CountersignError.Code {
    /// The challenge list, or a report payload, is not shaped as a MobileFirst server sends it.
    public static let invalidSecurityChecks = Self("invalid_security_checks", kind: .invalidInput)
    /// More checks in one challenge list than `SecurityCheckChallenges.maximumChecks`.
    public static let tooManySecurityChecks = Self("too_many_security_checks", kind: .invalidInput)
    /// A security-check name that is empty, too long, `.` or `..`, or uses other characters than a-z A-Z 0-9 . _ -
    public static let invalidSecurityCheckName = Self("invalid_security_check_name", kind: .invalidInput)
    /// One check's payload is larger or deeper than `SecurityCheckChallenges` accepts.
    public static let securityCheckPayloadTooLarge = Self("security_check_payload_too_large", kind: .payloadTooLarge)
    /// A failure or success was reported for a check that was never answered in the session.
    public static let securityCheckNotAnswered = Self("security_check_not_answered", kind: .notFound)
}
