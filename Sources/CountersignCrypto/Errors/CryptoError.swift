/// Why a cryptographic operation failed.
///
/// `code` is stable and meant for programs (the HTTP layer maps it to a status; tests compare
/// it). `message` is safe to show to an operator or an API client: it never contains key
/// material, passphrases or plaintext. `detail`, when present, carries what OpenSSL reported
/// (its error queue) for operations whose inputs are not secret, such as parsing a
/// certificate; it is only part of `debugDescription`, never of `description`.
///
/// Two errors are equal when their codes are equal, so `#expect(throws: CryptoError(.x))`-style
/// checks compare codes only.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A stable, machine-readable reason. New codes may be added; existing ones never change.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as it appears in API errors, `snake_case`.
        public let rawValue: String

        // Internal so that the set of codes stays defined in this file.
        init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// A caller passed a value outside the documented range (a negative byte count, an empty passphrase).
        public static let invalidArgument = Code("invalid_argument")
        /// OpenSSL failed where it normally cannot (allocation, random generator not seeded).
        public static let internalFailure = Code("crypto_internal_failure")

        /// Key bytes of the wrong length for AES-256.
        public static let invalidKeyLength = Code("invalid_key_length")
        /// AES-GCM authentication failed: wrong key, wrong associated data, tampered or truncated data.
        public static let decryptionFailed = Code("decryption_failed")

        /// The master key file does not exist or cannot be read.
        public static let masterKeyMissing = Code("master_key_missing")
        /// The master key file holds neither 32 raw bytes nor base64 or hex text of 32 bytes.
        public static let masterKeyInvalid = Code("master_key_invalid")
        /// `MasterKey.generate(toFile:)` refuses to replace an existing key file.
        public static let masterKeyExists = Code("master_key_exists")

        /// Bytes or PEM text that are not an X.509 certificate.
        public static let malformedCertificate = Code("malformed_certificate")
        /// More certificates than `Certificate.maximumChainLength`.
        public static let chainTooLong = Code("chain_too_long")
        /// An identity's chain holds a certificate that issued none of the others nor the leaf.
        public static let chainNotLinked = Code("chain_not_linked")
        /// A certificate (or PEM input) larger than the documented limit.
        public static let certificateTooLarge = Code("certificate_too_large")

        /// PEM or DER that is not a private key, or a key of an unsupported kind.
        public static let malformedPrivateKey = Code("malformed_private_key")
        /// A private key of a kind Countersign does not use (not RSA of at least 2048 bits, not
        /// EC on P-256, P-384 or P-521).
        public static let unsupportedPrivateKey = Code("unsupported_private_key")
        /// The private key is encrypted and no passphrase was given.
        public static let privateKeyPassphraseRequired = Code("private_key_passphrase_required")
        /// The private key is encrypted and the passphrase does not decrypt it.
        public static let privateKeyBadPassphrase = Code("private_key_bad_passphrase")
        /// The private key does not belong to the certificate.
        public static let keyCertificateMismatch = Code("key_certificate_mismatch")

        /// Bytes that are not a PKCS#12 file, or one without a key or a certificate.
        public static let malformedPKCS12 = Code("malformed_pkcs12")
        /// The PKCS#12 password is wrong (its MAC does not verify or its contents do not decrypt).
        public static let pkcs12BadPassword = Code("pkcs12_bad_password")
        /// The PKCS#12 file uses algorithms OpenSSL 3 disables by default (RC2, RC4, DES, ...).
        public static let pkcs12UnsupportedAlgorithm = Code("pkcs12_unsupported_algorithm")
    }

    /// The stable reason.
    public let code: Code
    /// A sentence safe to show; never contains secrets.
    public let message: String
    /// What OpenSSL reported, only for operations on non-secret input; `nil` otherwise.
    public let detail: String?

    /// An error with `code`, a safe `message` and an optional non-secret `detail`.
    public init(_ code: Code, _ message: String, detail: String? = nil) {
        self.code = code
        self.message = message
        self.detail = detail.flatMap { $0.isEmpty ? nil : $0 }
    }

    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool {
        lhs.code == rhs.code
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    public var description: String {
        "\(code.rawValue): \(message)"
    }

    public var debugDescription: String {
        guard let detail else { return description }
        return "\(description) [\(detail)]"
    }
}
