import CountersignCrypto
public import Foundation

/// A type whose Swift array decodes from a PostgreSQL column.
///
/// For most element types the column is a PostgreSQL array of that type (`text[]` as
/// `[String]`, `uuid[]` as `[UUID]`, `text[]` with NULLs as `[String?]`). `UInt8` is the
/// exception: `[UInt8]` decodes `bytea`.
public protocol PostgresArrayElement: Sendable {
    /// The elements encoded in the column's text, or nil if it does not decode.
    static func postgresArray(fromText text: String) -> [Self]?
}

extension PostgresArrayElement where Self: PostgresDecodable {
    public static func postgresArray(fromText text: String) -> [Self]? {
        guard let elements = PostgresArrayLiteral.decode(text) else { return nil }
        var result: [Self] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            if let element {
                guard let value = Self(postgresText: element) else { return nil }
                result.append(value)
            } else {
                guard let null = Self.postgresNullValue else { return nil }
                result.append(null)
            }
        }
        return result
    }
}

extension String: PostgresArrayElement {}
extension Int: PostgresArrayElement {}
extension Int64: PostgresArrayElement {}
extension Int32: PostgresArrayElement {}
extension Int16: PostgresArrayElement {}
extension Bool: PostgresArrayElement {}
extension Double: PostgresArrayElement {}
extension UUID: PostgresArrayElement {}
extension Date: PostgresArrayElement {}
extension Optional: PostgresArrayElement where Wrapped: PostgresArrayElement & PostgresDecodable {}

extension UInt8: PostgresArrayElement {
    /// Decodes `bytea` in the hex output format (`\x00ff...`).
    public static func postgresArray(fromText text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else {
            return nil
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((utf8.count - 2) / 2)
        var index = 2
        while index < utf8.count {
            guard let high = Hex.value(ofDigit: utf8[index]), let low = Hex.value(ofDigit: utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
