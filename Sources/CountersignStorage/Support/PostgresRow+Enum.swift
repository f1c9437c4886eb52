import CountersignCore
import CountersignPostgres

extension PostgresRow {
    /// A text column holding one of an enum's raw values. The schema's CHECK constraints keep
    /// these valid, so a stray value means the schema and the code disagree: fail loudly.
    func decodeEnum<T: RawRepresentable>(_ column: String, as type: T.Type = T.self) throws -> T where T.RawValue == String {
        let raw: String = try decode(column)
        guard let value = T(rawValue: raw) else {
            throw CountersignError(.internalError, "column \(column) holds a value this version does not know")
        }
        return value
    }
}
