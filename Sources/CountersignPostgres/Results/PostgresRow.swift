/// One row of a ``PostgresResult``. Values are kept in PostgreSQL's text form and decoded
/// on demand with ``decode(_:as:)``.
public struct PostgresRow: Sendable {
    let columns: PostgresColumns
    let values: [String?]

    /// The column names, in order.
    public var columnNames: [String] { columns.names }

    /// Decodes the first column called `column`.
    ///
    /// Throws ``PostgresError/Code/decodingFailed`` if there is no such column, if it is NULL
    /// and `T` is not optional, or if its text is not a `T`. The error names the column and
    /// the type, never the value.
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let index = columns.index(of: column) else {
            throw PostgresError(.decodingFailed, reason: "the result has no column named \"\(column)\"", column: column)
        }
        return try decodeValue(at: index, name: column, as: type)
    }

    /// Decodes the column at `index` (0-based).
    public func decode<T: PostgresDecodable>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard values.indices.contains(index) else {
            throw PostgresError(.decodingFailed, reason: "the result has no column at index \(index) (it has \(values.count))")
        }
        return try decodeValue(at: index, name: columns.names[index], as: type)
    }

    /// Whether the first column called `column` is NULL (false if there is no such column).
    public func isNull(_ column: String) -> Bool {
        guard let index = columns.index(of: column) else { return false }
        return values[index] == nil
    }

    private func decodeValue<T: PostgresDecodable>(at index: Int, name: String, as type: T.Type) throws -> T {
        guard let text = values[index] else {
            guard let null = T.postgresNullValue else {
                throw PostgresError(
                    .decodingFailed,
                    reason: "column \"\(name)\" is NULL but \(T.self) is not optional",
                    column: name
                )
            }
            return null
        }
        guard let value = T(postgresText: text) else {
            throw PostgresError(.decodingFailed, reason: "column \"\(name)\" cannot be decoded as \(T.self)", column: name)
        }
        return value
    }
}

/// The column names of a result, shared by all its rows.
struct PostgresColumns: Sendable {
    let names: [String]
    private let firstIndexByName: [String: Int]

    init(names: [String]) {
        self.names = names
        var indexByName: [String: Int] = [:]
        for (index, name) in names.enumerated() where indexByName[name] == nil {
            indexByName[name] = index
        }
        self.firstIndexByName = indexByName
    }

    func index(of name: String) -> Int? {
        firstIndexByName[name]
    }
}
