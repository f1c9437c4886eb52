public import CountersignCore
public import CountersignCrypto

extension CountersignError {
    /// The API error for a crypto error caused by what a client or admin sent (a certificate,
    /// a key, a PKCS#12 file): the same stable code, and the crypto module's safe message
    /// (never OpenSSL's detail, never a secret). Anything else is an `internal_error`.
    public init(_ error: CryptoError) {
        let code: CountersignError.Code? =
            switch error.code {
            case .malformedCertificate: .malformedCertificate
            case .chainTooLong: .chainTooLong
            case .chainNotLinked: .chainNotLinked
            case .certificateTooLarge: .certificateTooLarge
            case .malformedPrivateKey: .malformedPrivateKey
            case .unsupportedPrivateKey: .unsupportedPrivateKey
            case .privateKeyPassphraseRequired: .privateKeyPassphraseRequired
            case .privateKeyBadPassphrase: .privateKeyBadPassphrase
            case .keyCertificateMismatch: .keyCertificateMismatch
            case .malformedPKCS12: .malformedPKCS12
            case .pkcs12BadPassword: .pkcs12BadPassword
            case .pkcs12UnsupportedAlgorithm: .pkcs12UnsupportedAlgorithm
            default: nil
            }
        if let code {
            self.init(code, error.message)
        } else {
            self.init(.internalError, "internal error")
        }
    }
}
