internal import COpenSSL

/// A client identity for TLS client authentication: a private key, the certificate it
/// belongs to (the leaf) and the certificates that lead from the leaf towards a root.
public struct ClientIdentity: Sendable, CustomStringConvertible {
    /// The largest PKCS#12 file accepted (a key and a full chain take a few KiB).
    public static let maximumPKCS12ByteCount = 1024 * 1024
    /// Most key-derivation work (PBKDF2 or PKCS#12 iterations, scrypt's N * r * p) any one
    /// derivation of a PKCS#12 file or encrypted key may ask for: each iteration costs a hash, and
    /// the count is the uploader's to choose. A million is about half a second here; tools write
    /// 2,048 (OpenSSL) to a few hundred thousand.
    public static let maximumIterations = 1_000_000
    /// How many derivations at `maximumIterations` a PKCS#12 file's encrypted contents may ask
    /// for together.
    static let contentDerivations = 2

    /// The private key; never printed.
    public let privateKey: PrivateKey
    /// The leaf certificate, whose public key is `privateKey`'s.
    public let certificate: Certificate
    /// The other certificates, ordered from the leaf's issuer upwards where they form a path
    /// (certificates that do not are kept, after those that do).
    public let chain: [Certificate]

    /// An identity from parts already parsed.
    ///
    /// - Throws: `CryptoError` `key_certificate_mismatch` when the key is not the
    ///   certificate's; `chain_too_long` when leaf and chain exceed `Certificate.maximumChainLength`;
    ///   `chain_not_linked` when a chain certificate issued neither the leaf nor another issuer
    ///   of it (a bundle pasted with a stranger, which servers would be matched against).
    ///
    /// `checkingLinks` false: for identities read back from storage, taken as they were uploaded.
    public init(privateKey: PrivateKey, certificate: Certificate, chain: [Certificate] = [], checkingLinks: Bool = true) throws(CryptoError) {
        guard privateKey.matches(certificate) else {
            throw CryptoError(.keyCertificateMismatch, "private key does not belong to certificate \(certificate.subject)")
        }
        guard chain.count + 1 <= Certificate.maximumChainLength else {
            throw CryptoError(.chainTooLong, "identity holds more than \(Certificate.maximumChainLength) certificates")
        }
        if checkingLinks, let stranger = Self.unlinked(chain.filter { $0 != certificate }, from: certificate).first {
            throw CryptoError(
                .chainNotLinked,
                "the chain's certificate \(stranger.subject) issued neither \(certificate.subject) nor another certificate of its chain"
            )
        }
        self.privateKey = privateKey
        self.certificate = certificate
        self.chain = Self.ordered(chain.filter { $0 != certificate }, from: certificate)
    }

    /// An identity from a PEM private key and a PEM certificate chain.
    ///
    /// The leaf is the certificate the key belongs to, wherever it is in the chain text
    /// (normally first); the others become `chain`.
    ///
    /// - Throws: `CryptoError` from `PrivateKey(pem:passphrase:)` and
    ///   `Certificate.parseChain(pem:)`; `key_certificate_mismatch` when no certificate of
    ///   the chain belongs to the key.
    public init(privateKeyPEM: String, certificateChainPEM: String, passphrase: String? = nil) throws(CryptoError) {
        let key = try PrivateKey(pem: privateKeyPEM, passphrase: passphrase)
        let certificates = try Certificate.parseChain(pem: certificateChainPEM)
        guard let leaf = certificates.first(where: key.matches) else {
            throw CryptoError(.keyCertificateMismatch, "private key belongs to none of the \(certificates.count) certificates given")
        }
        try self.init(privateKey: key, certificate: leaf, chain: certificates.filter { $0 != leaf })
    }

    /// An identity from a PKCS#12 (`.p12`, `.pfx`) file.
    ///
    /// Files made by OpenSSL 3, Windows, macOS and Java with AES or 3DES are read. Files that
    /// use RC2-40 or other algorithms OpenSSL 3 only has in its legacy provider are refused
    /// with `pkcs12_unsupported_algorithm` (re-export them with modern algorithms): loading the
    /// legacy provider would enable those weak algorithms process-wide.
    ///
    /// Validity dates are not checked here: an expired identity still imports, and whether to
    /// release it is the policy's decision (`certificate.notAfter`).
    ///
    /// - Throws: `CryptoError` `malformed_pkcs12` (not PKCS#12, no integrity MAC, or no key or
    ///   no certificate inside), `pkcs12_bad_password`, `pkcs12_unsupported_algorithm`,
    ///   `key_certificate_mismatch`, `unsupported_private_key`, `chain_too_long`.
    public init(pkcs12 bytes: [UInt8], password: String, maximumIterations: Int = ClientIdentity.maximumIterations) throws(CryptoError) {
        guard !bytes.isEmpty, bytes.count <= Self.maximumPKCS12ByteCount else {
            throw CryptoError(.malformedPKCS12, "PKCS#12 file is empty or larger than \(Self.maximumPKCS12ByteCount) bytes")
        }
        // Nothing of the queue is reported: it concerns decrypting secret material.
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }

        var consumed = 0
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let p12 = d2i_PKCS12(nil, &cursor, buffer.count)
            if let cursor, let base = buffer.baseAddress { consumed = cursor - base }
            return p12
        }
        guard let parsed else {
            throw CryptoError(.malformedPKCS12, "bytes are not a PKCS#12 file")
        }
        let p12 = PKCS12Handle(taking: parsed)
        guard consumed == bytes.count else {
            throw CryptoError(.malformedPKCS12, "bytes follow the PKCS#12 structure")
        }

        // Without a MAC nothing vouches for the contents, and OpenSSL 3.0's PKCS12_parse
        // cannot read such files with a password anyway; every mainstream tool writes one.
        guard PKCS12_mac_present(p12.pointer) == 1 else {
            throw CryptoError(.malformedPKCS12, "PKCS#12 file has no integrity MAC and is not accepted")
        }
        // Verifying the MAC derives its key with as many iterations as the file asks for; no tool
        // writes more than a few hundred thousand (OpenSSL 2,048, Apple 2,000 to 100,000).
        var macIterations: UnsafePointer<ASN1_INTEGER>?
        PKCS12_get0_mac(nil, nil, nil, &macIterations, p12.pointer)
        if let macIterations, ASN1_INTEGER_get(macIterations) > maximumIterations {
            throw CryptoError(.malformedPKCS12, "PKCS#12 MAC asks for more than \(maximumIterations) key-derivation iterations")
        }
        // An empty password is written either as no password or as an empty BMPString,
        // depending on the tool; OpenSSL's own reader tries both the same way.
        var passwordBytes: [CChar]? = Array(password.utf8CString)
        defer { passwordBytes?.wipe() }
        if password.isEmpty, PKCS12_verify_mac(p12.pointer, nil, 0) == 1 {
            passwordBytes = nil
        } else if PKCS12_verify_mac(p12.pointer, passwordBytes, -1) != 1 {
            // A MAC that computes but differs queues nothing; a MAC that cannot be
            // computed (unknown digest, damaged parameters) queues the reason.
            let entries = OpenSSLErrorQueue.drain()
            if entries.isEmpty {
                throw CryptoError(.pkcs12BadPassword, "password does not open the PKCS#12 file (its MAC does not verify)")
            }
            if Self.isUnsupportedAlgorithm(entries) {
                throw CryptoError(.pkcs12UnsupportedAlgorithm, "PKCS#12 file uses a MAC algorithm OpenSSL 3 does not enable")
            }
            throw CryptoError(.malformedPKCS12, "PKCS#12 MAC cannot be computed")
        }

        // The contents are encrypted with key derivations of their own, as costly as the file
        // says: each is checked before anything is decrypted with it, against a budget for the
        // whole file of two derivations at the cap (the certificates and the key, as every tool
        // writes them), so that a file repeating an encrypted part cannot multiply the work.
        let passwordLength = Int32(passwordBytes.map { $0.count - 1 } ?? 0)
        let budget = Self.contentDerivations * maximumIterations
        guard passwordBytes.withOptionalPointer({ countersign_pkcs12_kdf_within(p12.pointer, $0, passwordLength, maximumIterations, budget) }) == 1 else {
            _ = OpenSSLErrorQueue.drain()
            throw CryptoError(
                .malformedPKCS12,
                "PKCS#12 contents ask for more than \(budget) key-derivation iterations together (\(maximumIterations) per part), or cannot be read"
            )
        }

        var key: OpaquePointer?
        var leaf: OpaquePointer?
        var others: OpaquePointer?
        let ok = passwordBytes.withOptionalPointer { PKCS12_parse(p12.pointer, $0, &key, &leaf, &others) }
        // Take ownership of whatever OpenSSL returned before deciding anything.
        let keyHandle = key.map { PrivateKeyHandle(taking: $0) }
        let leafHandle = leaf.map { X509Handle(taking: $0) }
        let otherHandles = X509Stack.handles(borrowing: others)
        if let others { countersign_sk_X509_pop_free(others) }
        guard ok == 1 else {
            let entries = OpenSSLErrorQueue.drain()
            if Self.isUnsupportedAlgorithm(entries) {
                throw CryptoError(
                    .pkcs12UnsupportedAlgorithm,
                    "PKCS#12 file is encrypted with a legacy algorithm (such as RC2-40); re-export it with AES-256"
                )
            }
            if entries.contains(where: { $0.library == ERR_LIB_PKCS12 && $0.reason == PKCS12_R_MAC_VERIFY_FAILURE }) {
                throw CryptoError(.pkcs12BadPassword, "password does not open the PKCS#12 file (its MAC does not verify)")
            }
            throw CryptoError(.malformedPKCS12, "PKCS#12 contents cannot be read")
        }
        guard let keyHandle else {
            throw CryptoError(.malformedPKCS12, "PKCS#12 file holds no private key")
        }
        guard let leafHandle else {
            throw CryptoError(.malformedPKCS12, "PKCS#12 file holds no certificate for its private key")
        }
        guard otherHandles.count + 1 <= Certificate.maximumChainLength else {
            throw CryptoError(.chainTooLong, "PKCS#12 file holds more than \(Certificate.maximumChainLength) certificates")
        }
        let privateKey = try PrivateKey(handle: keyHandle)
        let certificate = try Certificate(handle: leafHandle)
        var chain: [Certificate] = []
        for handle in otherHandles {
            chain.append(try Certificate(handle: handle))
        }
        try self.init(privateKey: privateKey, certificate: certificate, chain: chain)
    }

    /// A new PKCS#12 file holding the key, the leaf and the chain, protected by `passphrase`.
    ///
    /// Key and certificates are encrypted with AES-256-CBC under PBKDF2-HMAC-SHA256 (PBES2),
    /// integrity is an HMAC-SHA256 MAC, both with 2048 iterations (`PKCS12_DEFAULT_ITER`):
    /// enough for the random one-time passphrases Countersign releases with it
    /// (`SecureRandom.passphrase()`, 192 bits), where iterations add nothing, and quick to
    /// open on a phone. Readable by `openssl pkcs12`, curl (`--cert-type P12`), Java, Windows,
    /// and Apple platforms that support PBES2 (current macOS and iOS).
    ///
    /// - Parameters:
    ///   - passphrase: not empty.
    ///   - friendlyName: the name key and certificate are shown under in a keychain.
    /// - Throws: `CryptoError` `invalid_argument` for an empty passphrase;
    ///   `crypto_internal_failure` if OpenSSL cannot build the file.
    public func exportPKCS12(passphrase: String, friendlyName: String? = nil) throws(CryptoError) -> [UInt8] {
        guard !passphrase.isEmpty else {
            throw CryptoError(.invalidArgument, "a PKCS#12 passphrase must not be empty")
        }
        guard !passphrase.utf8.contains(0), !(friendlyName?.utf8.contains(0) ?? false) else {
            throw CryptoError(.invalidArgument, "passphrase and friendly name must not contain NUL characters")
        }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        let others = try X509Stack(chain.map(\.handle))
        let iterations = Int32(PKCS12_DEFAULT_ITER)
        let created = withExtendedLifetime((privateKey, certificate, others)) {
            // mac_iter -1: no MAC here; it is added below with an explicit digest so that the
            // algorithm does not depend on the OpenSSL version's default.
            PKCS12_create(
                passphrase,
                friendlyName,
                privateKey.handle.pointer,
                certificate.handle.pointer,
                others.pointer,
                NID_aes_256_cbc,
                NID_aes_256_cbc,
                iterations,
                -1,
                0
            )
        }
        guard let created else {
            throw CryptoError(.internalFailure, "OpenSSL could not build the PKCS#12 file")
        }
        let p12 = PKCS12Handle(taking: created)
        guard PKCS12_set_mac(p12.pointer, passphrase, -1, nil, 0, iterations, EVP_sha256()) == 1 else {
            throw CryptoError(.internalFailure, "OpenSSL could not add the PKCS#12 MAC")
        }
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_PKCS12(p12.pointer, &buffer)
        guard length > 0, let buffer else {
            throw CryptoError(.internalFailure, "OpenSSL could not encode the PKCS#12 file")
        }
        // The private key is in it, sealed only by the PKCS#12 password.
        defer { countersign_OPENSSL_clear_free(buffer, Int(length)) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }

    /// The leaf and the chain in PEM, leaf first.
    public var certificateChainPEM: String {
        ([certificate] + chain).map(\.pemString).joined()
    }

    /// Whether this identity answers a TLS server that accepts certificates from the CAs named
    /// by `distinguishedNames` (DER `Name`s from a CertificateRequest's certificate_authorities).
    ///
    /// An empty list means the server accepts any CA. Otherwise the identity matches when a
    /// name is the issuer of the leaf or of a chain certificate, or the subject of a chain
    /// certificate. Names compare as OpenSSL compares them (canonical form), not byte for byte.
    public func matchesAcceptableIssuers(_ distinguishedNames: [[UInt8]]) -> Bool {
        AcceptableIssuers.match(AcceptableIssuers.names(certificate: certificate, chain: chain), acceptable: distinguishedNames)
    }

    public var description: String {
        "ClientIdentity(subject: \(certificate.subject), issuer: \(certificate.issuer), key: \(privateKey.algorithm), chain: \(chain.count))"
    }

    /// The certificates of `chain` on no issuer path up from `leaf`, by name: an issuer of the
    /// leaf, or of such an issuer, and so on. Several with one subject (a CA and its cross-signed
    /// twin) are all on the path.
    static func unlinked(_ chain: [Certificate], from leaf: Certificate) -> [Certificate] {
        var linked = [leaf]
        var remaining = chain
        while let index = remaining.firstIndex(where: { candidate in linked.contains { DistinguishedName.equal(candidate.subjectDER, $0.issuerDER) } }) {
            linked.append(remaining.remove(at: index))
        }
        return remaining
    }

    // Walks issuer links from the leaf so that the chain is in the order TLS sends it.
    static func ordered(_ certificates: [Certificate], from leaf: Certificate) -> [Certificate] {
        var remaining = certificates
        var ordered: [Certificate] = []
        var current = leaf
        while let index = remaining.firstIndex(where: { DistinguishedName.equal($0.subjectDER, current.issuerDER) }) {
            let next = remaining.remove(at: index)
            ordered.append(next)
            // A self-issued certificate is the top of the path.
            if DistinguishedName.equal(next.subjectDER, next.issuerDER) { break }
            current = next
        }
        return ordered + remaining
    }

    private static func isUnsupportedAlgorithm(_ entries: [OpenSSLErrorQueue.Entry]) -> Bool {
        entries.contains { entry in
            entry.reason == ERR_R_UNSUPPORTED
                || (entry.library == ERR_LIB_EVP
                    && (entry.reason == EVP_R_UNSUPPORTED_ALGORITHM || entry.reason == EVP_R_UNSUPPORTED_CIPHER
                        || entry.reason == EVP_R_UNSUPPORTED_PRIVATE_KEY_ALGORITHM))
        }
    }
}

extension Optional where Wrapped == [CChar] {
    // Passes a C string or NULL, which OpenSSL distinguishes for PKCS#12 passwords.
    fileprivate func withOptionalPointer<Result>(_ body: (UnsafePointer<CChar>?) -> Result) -> Result {
        switch self {
        case .some(let bytes): bytes.withUnsafeBufferPointer { body($0.baseAddress) }
        case .none: body(nil)
        }
    }
}
