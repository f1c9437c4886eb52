import CountersignCore

/// Where a page of a listing in insertion order ended: the last row's sequence number, opaque
/// to clients like `PageCursor`.
struct SequenceCursor: Sendable {
    var after: Int64

    init(after: Int64) {
        self.after = after
    }

    /// Reads a cursor this service gave out; anything else is `invalid_query`.
    init(text: String) throws {
        guard let decoded = CursorText.decode(text, maxLength: 40), decoded.hasPrefix("s|"), let after = Int64(decoded.dropFirst(2)), after > 0 else {
            throw PageCursor.refused
        }
        self.init(after: after)
    }

    var text: String {
        CursorText.encode("s|\(after)")
    }
}
