public import Foundation

/// A statement parameter, always sent separately from the SQL text (`$1`, `$2`, ...).
///
/// How each kind travels:
/// - ``int(_:)``, ``bool(_:)``, ``double(_:)``: text, typed `int8`, `bool`, `float8`.
/// - ``bytea(_:)``: binary, typed `bytea`, so any byte (zero included) arrives intact.
/// - ``binary(_:)``: binary, untyped: the statement's cast says what the bytes are.
/// - ``text(_:)``, ``uuid(_:)``, ``timestamp(_:)``, ``textArray(_:)``, ``json(_:)`` and
///   ``null``: untyped text, so PostgreSQL takes the type from the context
///   (`WHERE id = $1` with a `uuid` column parses a UUID). Where the context does not
///   say, cast: `SELECT $1::uuid`.
///
/// Timestamps are sent as ISO 8601 in UTC with microseconds (PostgreSQL's precision);
/// text arrays as array literals with every element quoted and escaped.
public enum PostgresValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// Text. Must not contain a NUL character (PostgreSQL text cannot hold one).
    case text(String)
    /// A 64-bit integer (`int8`); narrower columns take it by assignment.
    case int(Int64)
    /// A boolean.
    case bool(Bool)
    /// A double-precision float, including `NaN` and the infinities.
    case double(Double)
    /// Raw bytes for a `bytea` column.
    case bytea([UInt8])
    /// A UUID.
    case uuid(UUID)
    /// A point in time, for `timestamptz` (or `timestamp`, read as UTC).
    case timestamp(Date)
    /// A one-dimensional `text[]`.
    case textArray([String])
    /// JSON text for a `json` or `jsonb` column.
    case json(String)
    /// Bytes in PostgreSQL's binary format for the type the statement gives the parameter
    /// (`$1::some_row[]`), as ``PostgresRecordArray`` builds them.
    case binary([UInt8])

    /// An integer parameter.
    public static func int(_ value: Int) -> PostgresValue {
        .int(Int64(value))
    }
}
