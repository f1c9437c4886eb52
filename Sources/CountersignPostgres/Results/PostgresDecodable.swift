/// A type a column can be decoded as, from PostgreSQL's text output.
///
/// Conforming: `String`, `Int`, `Int64`, `Int32`, `Int16`, `Bool`, `Double`, `UUID`, `Date`,
/// `[UInt8]` (bytea), arrays of those (`[String]`, `[UUID]`, `[String?]`, ...) and
/// `Optional` of any of them (NULL decodes as nil). Sessions run with `DateStyle = ISO`,
/// `TimeZone = UTC` and `bytea_output = hex`, so the text forms are fixed.
public protocol PostgresDecodable: Sendable {
    /// Creates a value from the column's text, or returns nil if the text is not a value
    /// of this type.
    init?(postgresText text: String)

    /// The value SQL NULL decodes as, or nil if NULL is not acceptable (the default).
    static var postgresNullValue: Self? { get }
}

extension PostgresDecodable {
    public static var postgresNullValue: Self? { nil }
}
