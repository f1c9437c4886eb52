public import Foundation

/// The public side of a client identity: its leaf certificate as admins see it, and what a
/// decision needs to choose it (validity, the CA names a TLS server may ask for). Never the key.
public struct IdentityCertificate: Hashable, Sendable, Codable {
    /// The leaf's subject, RFC 2253 (`CN=device,O=Example`).
    public var subject: String
    /// The leaf's issuer, RFC 2253.
    public var issuer: String
    /// Lowercase hex, no leading zero bytes.
    public var serialNumber: String
    public var notBefore: Date
    public var notAfter: Date
    /// SHA-256 of the leaf's DER, lowercase hex.
    public var sha256Fingerprint: String
    /// `RSA-2048`, `EC-prime256v1`, ...
    public var keyAlgorithm: String
    /// Subjects of the certificates that follow the leaf, in order.
    public var chainSubjects: [String]
    /// The DER names (base64) a TLS server may list among its acceptable CAs for this identity:
    /// the issuers of the leaf and of the chain, and the subjects of the chain.
    public var issuerNames: [String]

    public init(
        subject: String,
        issuer: String,
        serialNumber: String,
        notBefore: Date,
        notAfter: Date,
        sha256Fingerprint: String,
        keyAlgorithm: String,
        chainSubjects: [String],
        issuerNames: [String]
    ) {
        self.subject = subject
        self.issuer = issuer
        self.serialNumber = serialNumber
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.sha256Fingerprint = sha256Fingerprint
        self.keyAlgorithm = keyAlgorithm
        self.chainSubjects = chainSubjects
        self.issuerNames = issuerNames
    }

    /// Whether the leaf is within its validity period at `date`. Identities outside it are
    /// never released.
    public func isValid(at date: Date) -> Bool {
        notBefore <= date && date < notAfter
    }

    /// `valid`, `expired` or `notYetValid` at `date`.
    public func state(at date: Date) -> IdentityState {
        if date < notBefore { return .notYetValid }
        if date >= notAfter { return .expired }
        return .valid
    }
}

/// Where an identity stands with its validity period.
public enum IdentityState: String, StrictStringEnum {
    case valid
    case expired
    case notYetValid
}
