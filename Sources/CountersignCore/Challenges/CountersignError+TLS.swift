/// Codes of TLS challenges and client identities.
extension CountersignError.Code {
    // Challenges.
    /// A server-trust challenge the policy must evaluate carries no `serverTrust.certificates`.
    public static let serverTrustMissing = Self("server_trust_missing", kind: .invalidInput)
    /// A certificate is not base64, not DER X.509, truncated, or followed by other bytes.
    public static let malformedCertificate = Self("malformed_certificate", kind: .invalidInput)
    /// More certificates than a chain may hold (10).
    public static let chainTooLong = Self("chain_too_long", kind: .invalidInput)
    /// An uploaded identity's chain holds a certificate that issued none of the others nor the leaf.
    public static let chainNotLinked = Self("chain_not_linked", kind: .invalidInput)
    /// A certificate larger than 64 KiB.
    public static let certificateTooLarge = Self("certificate_too_large", kind: .invalidInput)
    /// A `distinguishedNames` entry is not base64 of a DER `Name`, or there are too many.
    public static let invalidDistinguishedName = Self("invalid_distinguished_name", kind: .invalidInput)

    // Uploading identities.
    public static let invalidIdentity = Self("invalid_identity", kind: .invalidInput)
    public static let malformedPKCS12 = Self("malformed_pkcs12", kind: .invalidInput)
    public static let pkcs12BadPassword = Self("pkcs12_bad_password", kind: .invalidInput)
    public static let pkcs12UnsupportedAlgorithm = Self("pkcs12_unsupported_algorithm", kind: .invalidInput)
    public static let malformedPrivateKey = Self("malformed_private_key", kind: .invalidInput)
    public static let unsupportedPrivateKey = Self("unsupported_private_key", kind: .invalidInput)
    public static let privateKeyPassphraseRequired = Self("private_key_passphrase_required", kind: .invalidInput)
    public static let privateKeyBadPassphrase = Self("private_key_bad_passphrase", kind: .invalidInput)
    public static let keyCertificateMismatch = Self("key_certificate_mismatch", kind: .invalidInput)
    /// The same certificate is already an identity of the tenant.
    public static let identityExists = Self("identity_exists", kind: .conflict)
    /// A policy rule names the identity.
    public static let identityInUse = Self("identity_in_use", kind: .conflict)
}
