import CountersignCore
import Foundation

/// Where a page of a listing ended, for an order other than `PageCursor`'s: the ordering
/// columns' values in the last row, as text, opaque to clients like `PageCursor`.
struct KeyCursor: Sendable {
    var values: [String]

    init(values: [String]) {
        self.values = values
    }

    /// The longest cursor text read. The values are names as stored (a security-check state's
    /// client id holds up to 200 characters of up to 4 UTF-8 bytes each, beside its check name and
    /// time), so the cursor after such a row runs to about 1,300 characters: the bound leaves room
    /// for every cursor this service gives out, and still refuses a very long query value unread.
    static let maximumTextLength = 4096

    /// Reads a cursor this service gave out with `count` values; anything else is `invalid_query`.
    init(text: String, count: Int) throws {
        guard let plain = CursorText.decode(text, maxLength: Self.maximumTextLength), let values = try? JSONDecoder().decode([String].self, from: Data(plain.utf8)),
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
