import Foundation

/// One parameter as libpq takes it: a type OID (0: let the server infer), the bytes (nil:
/// NULL) and whether they are binary.
struct EncodedParameter: Sendable, Hashable {
    var typeOID: UInt32
    var bytes: [UInt8]?
    var isBinary: Bool
}

/// The built-in type OIDs this module sends.
enum PostgresTypeOID {
    static let unspecified: UInt32 = 0
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let int8: UInt32 = 20
    static let float8: UInt32 = 701
}

extension PostgresValue {
    /// The wire form of this value; `position` is 1-based and only used in errors.
    func encoded(position: Int) throws(PostgresError) -> EncodedParameter {
        switch self {
        case .null:
            return EncodedParameter(typeOID: PostgresTypeOID.unspecified, bytes: nil, isBinary: false)
        case .text(let string):
            return try Self.text(string, position: position)
        case .int(let value):
            return EncodedParameter(typeOID: PostgresTypeOID.int8, bytes: Array(String(value).utf8), isBinary: false)
        case .bool(let value):
            return EncodedParameter(typeOID: PostgresTypeOID.bool, bytes: Array((value ? "t" : "f").utf8), isBinary: false)
        case .double(let value):
            return EncodedParameter(typeOID: PostgresTypeOID.float8, bytes: Array(Self.float8Text(value).utf8), isBinary: false)
        case .bytea(let bytes):
            return EncodedParameter(typeOID: PostgresTypeOID.bytea, bytes: bytes, isBinary: true)
        case .binary(let bytes):
            return EncodedParameter(typeOID: PostgresTypeOID.unspecified, bytes: bytes, isBinary: true)
        case .uuid(let uuid):
            return EncodedParameter(
                typeOID: PostgresTypeOID.unspecified,
                bytes: Array(uuid.uuidString.lowercased().utf8),
                isBinary: false
            )
        case .timestamp(let date):
            return EncodedParameter(
                typeOID: PostgresTypeOID.unspecified,
                bytes: Array(PostgresTimestamp.format(date).utf8),
                isBinary: false
            )
        case .textArray(let elements):
            return try Self.text(PostgresArrayLiteral.encode(elements), position: position)
        case .json(let json):
            return try Self.text(json, position: position)
        }
    }

    private static func text(_ string: String, position: Int) throws(PostgresError) -> EncodedParameter {
        let bytes = Array(string.utf8)
        // Text parameters travel as C strings: a NUL would silently cut the value short.
        guard !bytes.contains(0) else {
            throw PostgresError(.invalidParameter, reason: "parameter $\(position) contains a NUL character")
        }
        return EncodedParameter(typeOID: PostgresTypeOID.unspecified, bytes: bytes, isBinary: false)
    }

    /// float8 input syntax: Swift's shortest round-tripping form, with PostgreSQL's spelling
    /// of the special values.
    static func float8Text(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return "\(value)"
    }
}
