/// Checks shared by the request types of every feature.
public enum Validation {
    /// A human-chosen name or label: 1 to `maxLength` characters, no control characters.
    @discardableResult
    public static func name(_ value: String, field: String, maxLength: Int = 200) throws -> String {
        guard !value.isEmpty, value.count <= maxLength else {
            throw CountersignError(.invalidField, "'\(field)' must be 1 to \(maxLength) characters")
        }
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw CountersignError(.invalidField, "'\(field)' must not contain control characters")
        }
        return value
    }

    /// Free text that may be empty: at most `maxLength` characters, no control characters.
    @discardableResult
    public static func text(_ value: String, field: String, maxLength: Int) throws -> String {
        guard value.count <= maxLength else {
            throw CountersignError(.invalidField, "'\(field)' must be at most \(maxLength) characters")
        }
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw CountersignError(.invalidField, "'\(field)' must not contain control characters")
        }
        return value
    }

    /// An integer within `range`.
    @discardableResult
    public static func range<T: Comparable>(_ value: T, _ range: ClosedRange<T>, field: String) throws -> T {
        guard range.contains(value) else {
            throw CountersignError(.invalidField, "'\(field)' must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }
}
