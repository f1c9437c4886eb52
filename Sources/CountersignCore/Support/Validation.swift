/// Checks shared by the request types of every feature.
public enum Validation {
    /// A human-chosen name or label: 1 to `maxLength` characters, not all of them whitespace,
    /// no control characters.
    @discardableResult
    public static func name(_ value: String, field: String, maxLength: Int = 200) throws -> String {
        guard !value.isEmpty, fits(value, maxLength) else {
            throw CountersignError(.invalidField, "'\(field)' must be 1 to \(maxLength) characters")
        }
        guard !value.unicodeScalars.allSatisfy(\.properties.isWhitespace) else {
            throw CountersignError(.invalidField, "'\(field)' must not be blank")
        }
        guard !containsControlCharacters(value) else {
            throw CountersignError(.invalidField, "'\(field)' must not contain control characters")
        }
        return value
    }

    /// Free text that may be empty: at most `maxLength` characters, no control characters.
    @discardableResult
    public static func text(_ value: String, field: String, maxLength: Int) throws -> String {
        guard fits(value, maxLength) else {
            throw CountersignError(.invalidField, "'\(field)' must be at most \(maxLength) characters")
        }
        guard !containsControlCharacters(value) else {
            throw CountersignError(.invalidField, "'\(field)' must not contain control characters")
        }
        return value
    }

    /// At most `maxLength` characters, counted as PostgreSQL's `char_length` and JSON Schema's
    /// `maxLength` count them: Unicode scalars. Not graphemes: a base letter with any number of
    /// combining marks is one grapheme. No string has more scalars than UTF-8 bytes, and the
    /// bytes are counted at once.
    static func fits(_ value: String, _ maxLength: Int) -> Bool {
        value.utf8.count <= maxLength || value.unicodeScalars.count <= maxLength
    }

    static func containsControlCharacters(_ value: String) -> Bool {
        value.unicodeScalars.contains(where: isControl)
    }

    /// A control character (general category Cc: U+0000-U+001F and U+007F-U+009F), known
    /// without looking up the scalar's properties.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
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
