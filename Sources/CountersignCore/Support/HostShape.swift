/// The shape every host and host glob must have, beyond its characters: an IP literal is
/// bracketed whole (`[::1]`) and holds only what an IPv6 address can; anything else has no
/// brackets and no empty label (a leading `.`, or `..`), and a `:` only as an unbracketed IPv6
/// address has them. A protection space names its port apart, so `example.com:443` is no host:
/// a rule or credential for it would never apply. A trailing `.` (a fully qualified name) is
/// left to the callers.
enum HostShape {
    static func isWellFormed(_ host: some BidirectionalCollection<UInt8>, wildcards: Bool = false) -> Bool {
        let open = UInt8(ascii: "["), close = UInt8(ascii: "]"), dot = UInt8(ascii: ".")
        if host.first == open {
            guard host.count > 2, host.last == close else { return false }
            let literal = host.dropFirst().dropLast()
            return isIPv6(literal, wildcards: wildcards) && !literal.contains(open) && !literal.contains(close)
        }
        guard host.first != dot, !host.contains(open), !host.contains(close) else { return false }
        if host.contains(UInt8(ascii: ":")) {
            guard isIPv6(host, wildcards: wildcards) else { return false }
            let address = host.prefix { $0 != UInt8(ascii: "%") }
            // A dotted IPv4 tail comes only after the last `:` (`::ffff:10.0.0.1`).
            if let lastColon = address.lastIndex(of: UInt8(ascii: ":")), address[..<lastColon].contains(dot) { return false }
        }
        var previous: UInt8?
        for byte in host {
            if byte == dot, previous == dot { return false }
            previous = byte
        }
        return true
    }

    /// Hex digits, `:` and `.` (and wildcards in a glob), then maybe a zone (`%25en0`, RFC 6874),
    /// whose name is free. At least two `:`, as every IPv6 address has (`::1`), unless a wildcard
    /// may stand for more: with one, `cafe:443` is a name of hex digits and a port. A glob with
    /// one `:` and decimal digits after it (`*:443`) is taken for a host and a port too: an admin
    /// who writes that means port 443, and would otherwise get a rule matching IPv6 addresses
    /// that end in a group `443`.
    private static func isIPv6(_ address: some Collection<UInt8>, wildcards: Bool) -> Bool {
        let address = address.prefix { $0 != UInt8(ascii: "%") }
        let colons = address.count { $0 == UInt8(ascii: ":") }
        if colons < 2 {
            let hasWildcard = address.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") }
            let afterColon = address.drop { $0 != UInt8(ascii: ":") }.dropFirst()
            let looksLikePort = !afterColon.isEmpty && afterColon.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard wildcards, hasWildcard, !looksLikePort else { return false }
        }
        return address.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"):
                true
            case UInt8(ascii: ":"), UInt8(ascii: "."):
                true
            case UInt8(ascii: "*"), UInt8(ascii: "?"):
                wildcards
            default:
                false
            }
        }
    }
}
