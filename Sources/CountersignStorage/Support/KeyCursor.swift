import CountersignCore
import Foundation

/// Where a page of a listing ended, for an order other than `PageCursor`'s: the ordering
/// columns' values in the last row, as text, opaque to clients like `PageCursor`.
struct KeyCursor: Sendable {
    var values: [String]

    init(values: [String]) {
        self.values = values
    }

    /// Reads a cursor this service gave out with `count` values; anything else is `invalid_query`.
    init(text: String, count: Int) throws {
        guard let plain = CursorText.decode(text, maxLength: 1000), let values = try? JSONDecoder().decode([String].self, from: Data(plain.utf8)),
            values.count == count, values.allSatisfy({ !$0.utf8.contains(0) })
        else {
            throw PageCursor.refused
        }
        self.init(values: values)
    }

    var text: String {
        // An array of strings always encodes.
        CursorText.encode(String(decoding: (try? JSONEncoder().encode(values)) ?? Data(), as: UTF8.self))
    }
}
