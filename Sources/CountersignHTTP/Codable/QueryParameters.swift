import CountersignCore
import CountersignCrypto
import Foundation
import Hummingbird

/// Typed access to query parameters, each failure a 400 `invalid_query` naming the parameter.
struct QueryParameters {
    /// Values by name, both percent-decoded.
    private let values: [String: Substring]

    /// The parameters of a paged listing.
    static let paging = ["limit", "cursor"]

    /// Refuses a query with a parameter the route does not take (a misspelt filter would
    /// otherwise list everything, unfiltered), one given twice, one without a value (a blank
    /// filter read as left out would list everything as well), U+0000 (`%00`) anywhere,
    /// which PostgreSQL's text cannot hold and no parameter has a use for, or percent-encoding
    /// that is broken or decodes to no UTF-8 text (read with replacement characters, a filter
    /// would silently match nothing, or something else).
    init(_ request: Request, accepting names: [String]) throws {
        if let query = request.uri.query, !Self.isPercentEncodedUTF8(query.utf8) {
            throw CountersignError(.invalidQuery, "the query must be UTF-8 text, percent-encoded as RFC 3986 §2.1 says")
        }
        var values: [String: Substring] = [:]
        for (name, value) in Self.formDecoded(request.uri.query ?? "") {
            guard !name.utf8.contains(0), !value.utf8.contains(0) else {
                throw CountersignError(.invalidQuery, "query parameters must not contain U+0000 (%00)")
            }
            guard names.contains(where: { $0 == name }) else {
                let taken = names.isEmpty ? "none" : names.map { "'\($0)'" }.joined(separator: ", ")
                throw CountersignError(.invalidQuery, "'\(name.prefix(64))' is not a query parameter here; this route takes \(taken)")
            }
            guard values[name] == nil else {
                throw CountersignError(.invalidQuery, "'\(name)' is given more than once")
            }
            guard !value.isEmpty else {
                throw CountersignError(.invalidQuery, "'\(name)' has no value; leave it out to not filter by it")
            }
            values[name] = value
        }
        self.values = values
    }

    /// The name and value of each parameter, decoded as HTML forms encode them (WHATWG
    /// `application/x-www-form-urlencoded`), as the usual encoders (`URLSearchParams`, Python's
    /// `urlencode`) send them: `+` is a space (a plus is `%2B`), and names decode as values do
    /// (`%6Cimit` is `limit`, RFC 3986 §6.2.2.2). The query is percent-encoded UTF-8 (checked
    /// first), so everything decodes.
    static func formDecoded(_ query: String) -> [(name: String, value: Substring)] {
        func decoded(_ part: Substring) -> String {
            let spaced = part.replacingOccurrences(of: "+", with: " ")
            return spaced.removingPercentEncoding ?? spaced
        }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decoded(parts[0]), parts.count > 1 ? Substring(decoded(parts[1])) : "")
        }
    }

    /// Whether every `%` starts two hex digits and the bytes decoded are UTF-8. `&` and `=` are
    /// ASCII, so the whole query is UTF-8 exactly when each of its names and values is.
    private static func isPercentEncodedUTF8(_ query: String.UTF8View) -> Bool {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(query.count)
        var iterator = query.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Hex.value(ofDigit:)), let low = iterator.next().flatMap(Hex.value(ofDigit:)) else { return false }
            decoded.append(high << 4 | low)
        }
        return String(validating: decoded, as: UTF8.self) != nil
    }

    func string(_ name: String) -> String? {
        values[name].map { String($0) }
    }

    /// A parameter checked as the body member it filters by is checked, failing as a query.
    func checked(_ name: String, _ check: (String) throws -> Void) throws -> String? {
        guard let text = string(name) else { return nil }
        do {
            try check(text)
        } catch let error as CountersignError {
            throw CountersignError(.invalidQuery, error.message)
        }
        return text
    }

    func uuid(_ name: String) throws -> UUID? {
        guard let text = string(name) else { return nil }
        guard let id = UUID(text: text) else { throw CountersignError(.invalidQuery, "'\(name)' must be a UUID") }
        return id
    }

    func int(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = string(name) else { return nil }
        // Digits only: `Int` would also take a sign ("+5").
        guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let value = Int(text), range.contains(value) else {
            throw CountersignError(.invalidQuery, "'\(name)' must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// `limit` (1 to 1000, 100 when absent) and `cursor` (the previous page's `nextCursor`) of a paged listing.
    func page() throws -> (limit: Int, cursor: String?) {
        (try int("limit", in: 1...1000) ?? 100, string("cursor"))
    }

    func bool(_ name: String) throws -> Bool? {
        guard let text = string(name) else { return nil }
        switch text {
        case "true": return true
        case "false": return false
        default: throw CountersignError(.invalidQuery, "'\(name)' must be true or false")
        }
    }

    func date(_ name: String) throws -> Date? {
        guard let text = string(name) else { return nil }
        guard let date = Timestamp.parse(text) else { throw CountersignError(.invalidQuery, "'\(name)' must be an RFC 3339 date-time") }
        return date
    }

    func enumeration<T: StrictStringEnum>(_ name: String, as type: T.Type) throws -> T? {
        guard let text = string(name) else { return nil }
        guard let value = T(rawValue: text) else {
            throw CountersignError(.invalidQuery, "'\(name)' must be one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }
}
