// Byte-level building blocks of the HTTP field grammar (RFC 9110 §5.6) shared by the challenge
// parser, the serializer and the Authorization builders. Everything works on UTF-8 bytes: the
// grammar is defined on octets, and classifying bytes is both faster and safer than Characters
// (no grapheme clustering can merge a quote with a following combining mark).
enum AuthenticationSyntax {
    static let space = UInt8(ascii: " ")
    static let horizontalTab = UInt8(ascii: "\t")
    static let comma = UInt8(ascii: ",")
    static let equals = UInt8(ascii: "=")
    static let doubleQuote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")

    /// `tchar` of RFC 9110 §5.6.2.
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// The characters of `token68` before its trailing `=` padding (RFC 9110 §11.2).
    @inline(__always)
    static func isToken68Byte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"),
            UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    /// `OWS` / `BWS` members: SP and HTAB.
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == horizontalTab
    }

    /// `qdtext` of RFC 9110 §5.6.4: everything printable except `"` and `\`, plus obs-text.
    @inline(__always)
    static func isQuotedTextByte(_ byte: UInt8) -> Bool {
        switch byte {
        case horizontalTab, space, 0x21, 0x23...0x5B, 0x5D...0x7E, 0x80...0xFF: true
        default: false
        }
    }

    /// What may follow `\` in a `quoted-pair`: HTAB, SP, VCHAR, obs-text.
    @inline(__always)
    static func isQuotedPairByte(_ byte: UInt8) -> Bool {
        switch byte {
        case horizontalTab, 0x20...0x7E, 0x80...0xFF: true
        default: false
        }
    }

    /// `CTL` of RFC 5234: the C0 controls and DEL.
    @inline(__always)
    static func isControl(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F
    }

    /// Whether `string` is a non-empty `token`.
    static func isToken(_ string: String) -> Bool {
        var utf8 = string.utf8.makeIterator()
        guard let first = utf8.next(), isTokenByte(first) else { return false }
        while let byte = utf8.next() {
            guard isTokenByte(byte) else { return false }
        }
        return true
    }

    /// Whether `string` is a `token68`: one or more token68 characters, then any `=` padding.
    static func isToken68(_ string: String) -> Bool {
        var sawCharacter = false
        var inPadding = false
        for byte in string.utf8 {
            if byte == equals {
                guard sawCharacter else { return false }
                inPadding = true
            } else if isToken68Byte(byte), !inPadding {
                sawCharacter = true
            } else {
                return false
            }
        }
        return sawCharacter
    }

    /// Whether `string` can travel inside a `quoted-string` (no control character other than HTAB).
    static func isQuotable(_ string: String) -> Bool {
        string.utf8.allSatisfy { !isControl($0) || $0 == horizontalTab }
    }

    /// `string` as a `quoted-string`, escaping only `"` and `\` (RFC 9110 §5.6.4 says a sender
    /// should not escape anything else). The caller has checked `isQuotable`.
    static func quoted(_ string: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(string.utf8.count + 2)
        out.append(doubleQuote)
        for byte in string.utf8 {
            if byte == doubleQuote || byte == backslash {
                out.append(backslash)
            }
            out.append(byte)
        }
        out.append(doubleQuote)
        return String(decoding: out, as: UTF8.self)
    }

    /// ASCII-lowercases `bytes` (tokens are ASCII, so this is the whole case folding they need).
    static func lowercasedASCII(_ bytes: ArraySlice<UInt8>) -> String {
        String(
            decoding: bytes.lazy.map { $0 &- UInt8(ascii: "A") < 26 ? $0 | 0x20 : $0 },
            as: UTF8.self
        )
    }

    /// ASCII-lowercases `string`; non-ASCII scalars are left alone.
    static func lowercasedASCII(_ string: String) -> String {
        lowercasedASCII(ArraySlice(string.utf8))
    }

    /// Case-insensitive ASCII comparison, as HTTP compares tokens.
    static func equalsIgnoringASCIICase(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        return zip(lhs.utf8, rhs.utf8).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (a | 0x20) &- UInt8(ascii: "a") < 26)
        }
    }

    /// Lowercase hexadecimal, as Digest prints hashes (RFC 7616 §3.4: "LHEX").
    static func lowercaseHex(_ bytes: [UInt8]) -> String {
        let digits: StaticString = "0123456789abcdef"
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        digits.withUTF8Buffer { table in
            for byte in bytes {
                out.append(table[Int(byte >> 4)])
                out.append(table[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
