/// The host a chain is checked against, classified the way RFC 6125 requires: an IP literal
/// matches only IP address SANs, a DNS name only DNS SANs.
enum VerificationHost: Equatable {
    case dns(String)
    case ip(String)

    /// Classifies `host`, or explains why it cannot be checked at all.
    static func parse(_ host: String) -> Result<VerificationHost, TrustFailure> {
        var name = Substring(host)
        if name.hasPrefix("["), name.hasSuffix("]") {
            // A URL's bracketed IPv6 literal.
            name = name.dropFirst().dropLast()
            guard name.contains(":") else { return .failure(mismatch(host, "brackets hold no IPv6 address")) }
        }
        guard !name.isEmpty else { return .failure(mismatch(host, "no host to check")) }
        guard name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            // Internationalised names arrive as A-labels (xn--); anything else cannot be in a SAN.
            return .failure(mismatch(host, "host contains characters a certificate name cannot hold"))
        }
        if name.contains(":") {
            // Zone identifiers (fe80::1%eth0) name an interface of the client, never a SAN.
            guard !name.contains("%") else { return .failure(mismatch(host, "IPv6 zone identifiers cannot be matched")) }
            guard isIPv6(name) else { return .failure(mismatch(host, "not a valid IPv6 address")) }
            return .success(.ip(String(name)))
        }
        // All digits and dots is meant as an IPv4 address; forms OpenSSL does not parse
        // (127.1, 0x7f.0.0.1) are refused rather than compared as DNS names.
        if name.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }) {
            guard isIPv4(name) else { return .failure(mismatch(host, "not a valid IPv4 address")) }
            return .success(.ip(String(name)))
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty, !name.hasSuffix("."), !name.hasPrefix(".") else {
            return .failure(mismatch(host, "not a valid DNS name"))
        }
        return .success(.dns(String(name)))
    }

    private static func mismatch(_ host: String, _ reason: String) -> TrustFailure {
        TrustFailure(.hostnameMismatch, detail: "host \"\(host.prefix(255))\": \(reason)")
    }

    private static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { part in
            guard (1...3).contains(part.count), let value = Int(part), value <= 255 else { return false }
            // Leading zeros are octal to some parsers and decimal to others; refuse the ambiguity.
            return part == "0" || !part.hasPrefix("0")
        }
    }

    private static func isIPv6(_ text: Substring) -> Bool {
        // Shape only; OpenSSL's parser (X509_VERIFY_PARAM_set1_ip_asc) has the final word.
        text.count <= 45
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
                    UInt8(ascii: "A")...UInt8(ascii: "F"), UInt8(ascii: ":"), UInt8(ascii: "."):
                    true
                default:
                    false
                }
            }
    }
}
