extension CountersignError.Code {
    public static let invalidPolicy = Self("invalid_policy", kind: .invalidInput)
    public static let invalidHostPattern = Self("invalid_host_pattern", kind: .invalidInput)
    public static let unknownCredentialReference = Self("unknown_credential_reference", kind: .invalidInput)
    public static let policyVersionConflict = Self("policy_version_conflict", kind: .conflict)
    public static let credentialInUse = Self("credential_in_use", kind: .conflict)
    public static let sessionInvalidated = Self("session_invalidated", kind: .conflict)
    public static let outcomeConflict = Self("outcome_conflict", kind: .conflict)
    /// An outcome reported for a security-check answer at the decisions' outcome route, which
    /// would skip the check's attempt counting: it goes to the check's success or failure route.
    public static let securityCheckDecision = Self("security_check_decision", kind: .conflict)
    public static let persistenceNotAllowed = Self("persistence_not_allowed", kind: .forbidden)
    public static let invalidTTL = Self("invalid_ttl", kind: .invalidInput)
    public static let masterKeyUnavailable = Self("master_key_unavailable", kind: .unavailable)
    public static let secretUnreadable = Self("secret_unreadable", kind: .internalFailure)
}

extension CountersignError.Code {
    public static let credentialConflict = Self("credential_conflict", kind: .conflict)
}
