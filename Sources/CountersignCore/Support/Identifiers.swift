public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// UUIDs as text, for the policy code, which does not import Foundation.
public enum UUIDText {
    /// Whether `text` is a UUID in the 8-4-4-4-12 hex form.
    public static func isValid(_ text: String) -> Bool {
        UUID(text: text) != nil
    }
}

/// Base64 text, measured without decoding it.
public enum Base64Text {
    /// The number of bytes `text` decodes to, or `nil` when it is not padded standard base64.
    ///
    /// The bits a padded text leaves unused must be zero, as the crypto module's decoder requires
    /// (two texts must not decode to the same bytes): a pin it would not decode never matches.
    public static func decodedLength(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count % 4 == 0 else { return nil }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let padding = bytes.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        let symbols = bytes.dropLast(padding)
        guard padding <= 2, symbols.allSatisfy(alphabet.contains) else { return nil }
        if padding > 0, let last = symbols.last, let value = alphabet.firstIndex(of: last) {
            // One `=`: the last symbol carries 4 bits and 2 unused; two: 2 bits and 4 unused.
            guard value & (padding == 1 ? 0x03 : 0x0f) == 0 else { return nil }
        }
        return bytes.count / 4 * 3 - padding
    }
}

extension UUID {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A random (version 4) UUID from the C library's cryptographic generator (arc4random:
    /// ChaCha20, seeded from the kernel). Foundation's `UUID()` on Linux opens /dev/urandom for
    /// every one, a file descriptor per decision.
    public static func random() -> UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { buffer in
            arc4random_buf(buffer.baseAddress!, buffer.count)
            buffer[6] = buffer[6] & 0x0F | 0x40
            buffer[8] = buffer[8] & 0x3F | 0x80
        }
        return UUID(uuid: bytes)
    }

    /// A time-ordered (version 7, RFC 9562) UUID: the Unix time in milliseconds, then random
    /// bits. Rows keyed by these are inserted at the right end of their index.
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        var id = random().uuid
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        withUnsafeMutableBytes(of: &id) { buffer in
            for index in 0..<6 {
                buffer[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index)))
            }
            buffer[6] = buffer[6] & 0x0F | 0x70
        }
        return UUID(uuid: id)
    }

    /// The 8-4-4-4-12 text in lower case: RFC 9562's output form, the form the API, the database
    /// and the log lines show. (`uuidString` is upper case, and goes through `sprintf` on Linux.)
    public var text: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    out[position] = Self.hexDigits[Int(byte >> 4)]
                    out[position + 1] = Self.hexDigits[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }

    /// Parses the 8-4-4-4-12 hex form in either case, as `UUID(uuidString:)` does through
    /// `sscanf` on Linux.
    @inlinable
    public init?(text: some StringProtocol) {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &bytes) { buffer -> Bool in
            var utf8 = text.utf8.makeIterator()
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard utf8.next() == UInt8(ascii: "-") else { return false }
                }
                guard let high = utf8.next().flatMap(Self.hexValue), let low = utf8.next().flatMap(Self.hexValue) else { return false }
                buffer[index] = high << 4 | low
            }
            return utf8.next() == nil
        }
        guard parsed else { return nil }
        self.init(uuid: bytes)
    }

    @usableFromInline
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A client's own name for itself (`clientId`), compared as PostgreSQL stores and compares it:
/// byte for byte. Swift's `==` takes canonically equivalent spellings as one (`café` written with
/// é, or with e and a combining accent), which the database keeps as two clients: a key bound to
/// one would otherwise reach the other's sessions and `permanent` credentials.
public enum ClientIdentifier {
    public static func same(_ one: String, _ other: String) -> Bool {
        one.utf8.elementsEqual(other.utf8)
    }
}
