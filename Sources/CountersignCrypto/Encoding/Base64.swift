/// Base64 (RFC 4648 section 4) and base64url (section 5), written out so that decoding rules
/// are ours to state: keys and pins must not depend on how lenient a platform decoder is.
enum Base64 {
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in base64 (`url == false`, with `=` padding) or base64url without padding.
    static func encode(_ bytes: [UInt8], url: Bool = false) -> String {
        let alphabet = url ? urlAlphabet : standardAlphabet
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(value >> 18 & 0x3f)])
            out.append(alphabet[Int(value >> 12 & 0x3f)])
            out.append(alphabet[Int(value >> 6 & 0x3f)])
            out.append(alphabet[Int(value & 0x3f)])
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            var value = UInt32(bytes[index]) << 16
            if remaining == 2 { value |= UInt32(bytes[index + 1]) << 8 }
            out.append(alphabet[Int(value >> 18 & 0x3f)])
            out.append(alphabet[Int(value >> 12 & 0x3f)])
            if remaining == 2 { out.append(alphabet[Int(value >> 6 & 0x3f)]) }
            if !url { out.append(contentsOf: Array(repeating: UInt8(ascii: "="), count: 3 - remaining)) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64 or base64url, padded or not; `nil` for anything else.
    ///
    /// Whitespace inside the text, mixed alphabets, misplaced padding and impossible lengths
    /// are rejected; callers trim surrounding whitespace themselves. `text` is UTF-8; what is
    /// copied of it on the way is wiped, as it may be a key.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var symbols = Array(text)
        var values: [UInt8] = []
        defer {
            symbols.wipe()
            values.wipe()
        }
        var padding = 0
        while symbols.last == UInt8(ascii: "=") {
            symbols.removeLast()
            padding += 1
        }
        guard padding <= 2 else { return nil }
        if padding > 0, (symbols.count + padding) % 4 != 0 { return nil }
        guard symbols.count % 4 != 1 else { return nil }

        var sawStandard = false
        var sawURL = false
        values.reserveCapacity(symbols.count)
        for symbol in symbols {
            switch symbol {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(symbol - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(symbol - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(symbol - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"):
                values.append(62)
                sawStandard = true
            case UInt8(ascii: "/"):
                values.append(63)
                sawStandard = true
            case UInt8(ascii: "-"):
                values.append(62)
                sawURL = true
            case UInt8(ascii: "_"):
                values.append(63)
                sawURL = true
            default: return nil
            }
        }
        guard !(sawStandard && sawURL) else { return nil }

        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index + 4 <= values.count {
            let value =
                UInt32(values[index]) << 18 | UInt32(values[index + 1]) << 12
                | UInt32(values[index + 2]) << 6 | UInt32(values[index + 3])
            out.append(UInt8(value >> 16 & 0xff))
            out.append(UInt8(value >> 8 & 0xff))
            out.append(UInt8(value & 0xff))
            index += 4
        }
        switch values.count - index {
        case 2:
            // Non-zero unused bits mean two texts would decode to the same bytes; refuse.
            guard values[index + 1] & 0x0f == 0 else { return nil }
            out.append(values[index] << 2 | values[index + 1] >> 4)
        case 3:
            guard values[index + 2] & 0x03 == 0 else { return nil }
            out.append(values[index] << 2 | values[index + 1] >> 4)
            out.append((values[index + 1] & 0x0f) << 4 | values[index + 2] >> 2)
        default:
            break
        }
        return out
    }
}
