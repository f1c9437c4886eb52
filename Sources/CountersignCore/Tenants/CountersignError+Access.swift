extension CountersignError {
    /// A key that is revoked (or never was), refused wherever it is found out: by the key's own
    /// check, or from the database's state by an instance that had not heard of the revocation.
    public static let apiKeyNotValid = CountersignError(.invalidAPIKey, "the API key is not valid")
    /// The tenant of the key was disabled, found out as ``apiKeyNotValid`` is.
    public static let tenantIsDisabled = CountersignError(.tenantDisabled, "this tenant is disabled")
}
