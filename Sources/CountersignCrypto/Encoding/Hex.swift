/// Hexadecimal decoding for key files, PostgreSQL's bytea text and percent-encoding (encoding
/// is `[UInt8].hexString`).
public enum Hex {
    /// The bytes of an even-length run of hex digits (UTF-8), either case; `nil` for anything
    /// else. What is copied of `text` on the way is wiped, as it may be a key.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var digits = Array(text)
        defer { digits.wipe() }
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(ofDigit: digits[index]), let low = value(ofDigit: digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// The value of one hex digit, either case; `nil` for any other byte.
    public static func value(ofDigit digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
