internal import COpenSSL
public import Foundation

/// An X.509 certificate, parsed once by OpenSSL, with the fields Countersign reports and compares.
///
/// Values are immutable and Sendable. Two certificates are equal when their DER encodings are.
public struct Certificate: Sendable, Hashable, CustomStringConvertible {
    /// The largest DER encoding accepted for one certificate (real ones are 1 to 4 KiB).
    public static let maximumByteCount = 64 * 1024
    /// The most certificates accepted in one chain, presented or in PEM.
    public static let maximumChainLength = 10
    /// The largest PEM text accepted (room for a full chain in base64 plus comments).
    public static let maximumPEMByteCount = 1024 * 1024

    let handle: X509Handle

    /// The certificate exactly as it was encoded.
    public let derBytes: [UInt8]
    /// The subject as `openssl x509 -noout -subject -nameopt RFC2253` prints it, e.g. `CN=localhost,O=Example`.
    public let subject: String
    /// The issuer, in the same form as `subject`.
    public let issuer: String
    /// The DER encoding of the subject `Name`, as a TLS CertificateRequest lists acceptable CAs.
    public let subjectDER: [UInt8]
    /// The DER encoding of the issuer `Name`.
    public let issuerDER: [UInt8]
    /// The serial number in lowercase hex without leading zero bytes (`-` first if negative).
    public let serialNumberHex: String
    /// Start of the validity period.
    public let notBefore: Date
    /// End of the validity period.
    public let notAfter: Date
    /// SHA-256 of the DER encoding, lowercase hex without colons.
    public let sha256Fingerprint: String
    /// Base64 of SHA-256 over the DER SubjectPublicKeyInfo: the SPKI pin format of RFC 7469,
    /// what `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64` prints.
    public let spkiSHA256Base64: String
    /// Whether basic constraints mark the certificate as a CA.
    public let isCA: Bool
    // The raw pin digest, compared by the trust evaluator.
    let spkiSHA256: [UInt8]

    /// Parses one DER-encoded certificate.
    ///
    /// Trailing bytes after the certificate are refused, so `derBytes` is exactly the input.
    ///
    /// - Throws: `CryptoError` `certificate_too_large` above `maximumByteCount`;
    ///   `malformed_certificate` for anything that is not one well-formed certificate.
    public init(derBytes: [UInt8]) throws(CryptoError) {
        guard derBytes.count <= Self.maximumByteCount else {
            throw CryptoError(.certificateTooLarge, "certificate is larger than \(Self.maximumByteCount) bytes")
        }
        guard !derBytes.isEmpty else {
            throw CryptoError(.malformedCertificate, "certificate is empty")
        }
        OpenSSLErrorQueue.clear()
        var consumed = 0
        let parsed: OpaquePointer? = derBytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let x509 = d2i_X509(nil, &cursor, buffer.count)
            if let cursor, let base = buffer.baseAddress { consumed = cursor - base }
            return x509
        }
        guard let parsed else {
            throw CryptoError(.malformedCertificate, "bytes are not a DER-encoded X.509 certificate", detail: OpenSSLErrorQueue.drainDescription())
        }
        let handle = X509Handle(taking: parsed)
        guard consumed == derBytes.count else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(.malformedCertificate, "\(derBytes.count - consumed) bytes follow the certificate")
        }
        try self.init(handle: handle, derBytes: derBytes)
    }

    /// Parses a PEM text holding exactly one certificate.
    ///
    /// - Throws: `CryptoError` `malformed_certificate` when there is no certificate or more
    ///   than one; the errors of `init(derBytes:)`.
    public init(pem: String) throws(CryptoError) {
        let certificates = try Self.parseChain(pem: pem)
        guard certificates.count == 1 else {
            throw CryptoError(.malformedCertificate, "PEM holds \(certificates.count) certificates where one was expected")
        }
        self = certificates[0]
    }

    /// Parses every `CERTIFICATE` block of a PEM text, in order (for a chain: leaf first).
    ///
    /// Text around the blocks and blocks of other types (a private key, parameters) are skipped,
    /// as OpenSSL's tools do.
    ///
    /// - Throws: `CryptoError` `malformed_certificate` when a block is damaged or there is no
    ///   certificate at all; `chain_too_long` above `maximumChainLength` certificates;
    ///   `certificate_too_large` when the text exceeds `maximumPEMByteCount` or one
    ///   certificate exceeds `maximumByteCount`.
    public static func parseChain(pem: String) throws(CryptoError) -> [Certificate] {
        var certificates: [Certificate] = []
        try PEMReader.forEachBlock(in: Array(pem.utf8), limit: maximumPEMByteCount) { (label, der) throws(CryptoError) in
            // "X509 CERTIFICATE" is the pre-RFC 7468 spelling some old tools still write.
            guard label == "CERTIFICATE" || label == "X509 CERTIFICATE" else { return }
            guard certificates.count < maximumChainLength else {
                throw CryptoError(.chainTooLong, "PEM holds more than \(maximumChainLength) certificates")
            }
            certificates.append(try Certificate(derBytes: der))
        }
        guard !certificates.isEmpty else {
            throw CryptoError(.malformedCertificate, "PEM holds no certificate")
        }
        return certificates
    }

    /// Parses a PEM text that must hold certificates and nothing else, as trust anchors: a
    /// private key pasted with them (a server's combined key and chain file) is refused rather
    /// than skipped, since the text is kept and shown where no secret belongs.
    ///
    /// - Throws: `CryptoError` `malformed_certificate` naming the label of a block that is not a
    ///   certificate (never its contents); the errors of `parseChain(pem:)`.
    public static func parseCertificatesOnly(pem: String) throws(CryptoError) -> [Certificate] {
        var blocks = 0
        try PEMReader.forEachBlock(in: Array(pem.utf8), limit: maximumPEMByteCount) { (label, _) throws(CryptoError) in
            guard label == "CERTIFICATE" || label == "X509 CERTIFICATE" else {
                throw CryptoError(.malformedCertificate, "PEM holds a \(label.prefix(64)) block where only certificates belong")
            }
            blocks += 1
        }
        // OpenSSL reads a block only from a boundary at the start of a line, in capitals, and
        // skips anything else as text between blocks, which is kept all the same: an indented or
        // lower-case private key block would be shown wherever the anchors are.
        let folded = pem.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }
        guard folded.occurrences(of: Array("-----begin".utf8)) == blocks, folded.occurrences(of: Array("private key".utf8)) == 0 else {
            throw CryptoError(
                .malformedCertificate,
                "PEM holds text that is not a certificate block (a boundary line indented or in lower case, or a private key): only certificates belong"
            )
        }
        return try parseChain(pem: pem)
    }

    /// Parses a list of DER-encoded certificates, in order.
    ///
    /// - Throws: `CryptoError` `chain_too_long` above `maximumChainLength`; the errors of `init(derBytes:)`.
    public static func parseChain(derBytes: [[UInt8]]) throws(CryptoError) -> [Certificate] {
        guard derBytes.count <= maximumChainLength else {
            throw CryptoError(.chainTooLong, "chain holds \(derBytes.count) certificates, more than \(maximumChainLength)")
        }
        var certificates: [Certificate] = []
        for der in derBytes {
            certificates.append(try Certificate(derBytes: der))
        }
        return certificates
    }

    /// Wraps a certificate OpenSSL already parsed (from a PKCS#12 file, a verified chain).
    init(handle: X509Handle) throws(CryptoError) {
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(handle.pointer, &buffer)
        guard length > 0, let buffer else {
            throw CryptoError(.malformedCertificate, "certificate cannot be encoded", detail: OpenSSLErrorQueue.drainDescription())
        }
        let der = Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
        countersign_OPENSSL_free(buffer)
        guard der.count <= Self.maximumByteCount else {
            throw CryptoError(.certificateTooLarge, "certificate is larger than \(Self.maximumByteCount) bytes")
        }
        try self.init(handle: handle, derBytes: der)
    }

    private init(handle: X509Handle, derBytes: [UInt8]) throws(CryptoError) {
        let x509 = handle.pointer
        // Extensions OpenSSL cannot decode (a malformed SAN, duplicate extensions) make the
        // verifier refuse the certificate later anyway; saying so now gives the better error.
        let flags = X509_get_extension_flags(x509)
        guard flags & UInt32(EXFLAG_INVALID) == 0 else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(.malformedCertificate, "certificate has extensions that cannot be decoded")
        }
        guard let subjectName = X509_get_subject_name(x509), let issuerName = X509_get_issuer_name(x509) else {
            throw CryptoError(.malformedCertificate, "certificate has no subject or issuer")
        }
        guard let notBefore = X509_get0_notBefore(x509).flatMap(Self.date(from:)),
            let notAfter = X509_get0_notAfter(x509).flatMap(Self.date(from:))
        else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(.malformedCertificate, "certificate validity dates cannot be decoded")
        }
        let spki = try Self.subjectPublicKeyInfo(of: x509)

        self.handle = handle
        self.derBytes = derBytes
        self.subject = try DistinguishedName.rfc2253(ofName: subjectName)
        self.issuer = try DistinguishedName.rfc2253(ofName: issuerName)
        self.subjectDER = try DistinguishedName.der(ofName: subjectName)
        self.issuerDER = try DistinguishedName.der(ofName: issuerName)
        self.serialNumberHex = Self.serialNumberHex(of: x509)
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.sha256Fingerprint = Digest.hash(.sha256, derBytes).hexString
        self.spkiSHA256 = Digest.hash(.sha256, spki)
        self.spkiSHA256Base64 = Base64.encode(spkiSHA256)
        self.isCA = flags & UInt32(EXFLAG_CA) != 0
        OpenSSLErrorQueue.clear()
    }

    /// The certificate as PEM text (`-----BEGIN CERTIFICATE-----`, 64-column base64, trailing newline).
    public var pemString: String {
        PEMReader.encode(label: "CERTIFICATE", der: derBytes)
    }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        lhs.derBytes == rhs.derBytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(sha256Fingerprint)
    }

    public var description: String {
        "Certificate(subject: \(subject), issuer: \(issuer), serial: \(serialNumberHex), notAfter: \(notAfter), sha256: \(sha256Fingerprint))"
    }

    private static func subjectPublicKeyInfo(of x509: OpaquePointer) throws(CryptoError) -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x509), &buffer)
        guard length > 0, let buffer else {
            throw CryptoError(.malformedCertificate, "certificate public key cannot be encoded", detail: OpenSSLErrorQueue.drainDescription())
        }
        defer { countersign_OPENSSL_free(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }

    private static func serialNumberHex(of x509: OpaquePointer) -> String {
        guard let serial = X509_get0_serialNumber(x509) else { return "" }
        let length = Int(ASN1_STRING_length(serial))
        guard length > 0, let data = ASN1_STRING_get0_data(serial) else { return "00" }
        let magnitude = Array(UnsafeBufferPointer(start: data, count: length)).drop { $0 == 0 }
        let hex = magnitude.isEmpty ? "00" : Array(magnitude).hexString
        return ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER ? "-" + hex : hex
    }

    // ASN1_TIME_to_tm validates UTCTime / GeneralizedTime; the calendar arithmetic is done
    // here rather than with timegm so that it does not depend on the process time zone.
    private static func date(from time: UnsafePointer<ASN1_TIME>) -> Date? {
        var fields = tm()
        guard ASN1_TIME_to_tm(time, &fields) == 1 else { return nil }
        let days = daysFromCivil(year: Int(fields.tm_year) + 1900, month: Int(fields.tm_mon) + 1, day: Int(fields.tm_mday))
        let seconds = days * 86_400 + Int(fields.tm_hour) * 3600 + Int(fields.tm_min) * 60 + Int(fields.tm_sec)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    // Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension [UInt8] {
    /// How many times `needle` occurs, overlaps counted (none occur in the needles used here).
    fileprivate func occurrences(of needle: [UInt8]) -> Int {
        guard !needle.isEmpty, count >= needle.count else { return 0 }
        var found = 0
        for start in 0...(count - needle.count) where self[start] == needle[0] && self[start..<(start + needle.count)].elementsEqual(needle) {
            found += 1
        }
        return found
    }
}
