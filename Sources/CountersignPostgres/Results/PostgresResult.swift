/// The rows a statement returned, fully read into memory.
///
/// A random-access collection of ``PostgresRow``s, so `count`, `first`, `isEmpty` and
/// `for row in result` work as expected.
public struct PostgresResult: Sendable, RandomAccessCollection {
    /// The rows, in the order the server sent them.
    public let rows: [PostgresRow]
    /// The column names, in order.
    public let columns: [String]
    /// Rows inserted, updated, deleted, selected, ... as the server reported
    /// (`PQcmdTuples`); 0 for statements without a count.
    public let affectedRows: Int

    init(columns: [String], values: [[String?]], affectedRows: Int) {
        let shared = PostgresColumns(names: columns)
        self.columns = columns
        self.rows = values.map { PostgresRow(columns: shared, values: $0) }
        self.affectedRows = affectedRows
    }

    public var startIndex: Int { rows.startIndex }
    public var endIndex: Int { rows.endIndex }
    public subscript(position: Int) -> PostgresRow { rows[position] }
}
