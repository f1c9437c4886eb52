/// Matching a client identity against the certificate authorities a TLS server accepts
/// (the `certificate_authorities` of its CertificateRequest), from public data only, so that
/// choosing an identity never needs its private key.
public enum AcceptableIssuers {
    /// The most names accepted from one server. Most send a few; a Windows server may send its
    /// whole trusted-root store, some hundreds, and TLS 1.2 caps the list at 65,535 bytes (a
    /// name takes at least about a hundred).
    public static let maximumNameCount = 1000

    /// The DER names under which a server may accept an identity with `certificate` as its
    /// leaf and `chain` after it: the issuer of the leaf and of every chain certificate, and
    /// the subject of every chain certificate. Duplicates (byte for byte) are listed once.
    public static func names(certificate: Certificate, chain: [Certificate]) -> [[UInt8]] {
        var names = [certificate.issuerDER]
        for certificate in chain {
            names.append(certificate.issuerDER)
            names.append(certificate.subjectDER)
        }
        var seen: Set<[UInt8]> = []
        return names.filter { seen.insert($0).inserted }
    }

    /// Whether one of `names` is one of the server's `acceptable` names, compared as OpenSSL
    /// compares names (canonical form), not byte for byte. An empty `acceptable` list means
    /// the server accepts any CA.
    public static func match(_ names: [[UInt8]], acceptable: [[UInt8]]) -> Bool {
        guard !acceptable.isEmpty else { return true }
        return acceptable.contains { name in names.contains { DistinguishedName.equal($0, name) } }
    }

    /// Whether `der` is exactly one DER-encoded X.501 `Name`.
    public static func isName(_ der: [UInt8]) -> Bool {
        DistinguishedName.isWellFormed(der)
    }
}
