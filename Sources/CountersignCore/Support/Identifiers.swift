/// UUIDs as text, checked without Foundation.
public enum UUIDText {
    /// Whether `text` is a UUID in the 8-4-4-4-12 hex form.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
                else { return false }
            }
        }
        return true
    }
}

/// Base64 text, measured without decoding it.
public enum Base64Text {
    /// The number of bytes `text` decodes to, or `nil` when it is not padded standard base64.
    public static func decodedLength(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count % 4 == 0 else { return nil }
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let padding = bytes.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        guard padding <= 2, bytes.dropLast(padding).allSatisfy(alphabet.contains) else { return nil }
        return bytes.count / 4 * 3 - padding
    }
}
