/// The shape every host and host glob must have, beyond its characters: an IP literal is
/// bracketed whole (`[::1]`) and holds only what an IPv6 address can; anything else has no
/// brackets and no empty label (a leading `.`, or `..`). A trailing `.` (a fully qualified name)
/// is left to the callers.
enum HostShape {
    static func isWellFormed(_ host: some BidirectionalCollection<UInt8>, wildcards: Bool = false) -> Bool {
        let open = UInt8(ascii: "["), close = UInt8(ascii: "]"), dot = UInt8(ascii: ".")
        if host.first == open {
            guard host.count > 2, host.last == close else { return false }
            // An IPv6 address, then maybe a zone (`%25en0`, RFC 6874), whose name is free.
            let literal = host.dropFirst().dropLast()
            let zone = literal.firstIndex(of: UInt8(ascii: "%"))
            return literal[..<(zone ?? literal.endIndex)].allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"):
                    true
                case UInt8(ascii: ":"), dot:
                    true
                case UInt8(ascii: "*"), UInt8(ascii: "?"):
                    wildcards
                default:
                    false
                }
            } && !literal.contains(open) && !literal.contains(close)
        }
        guard host.first != dot, !host.contains(open), !host.contains(close) else { return false }
        var previous: UInt8?
        for byte in host {
            if byte == dot, previous == dot { return false }
            previous = byte
        }
        return true
    }
}
