import CountersignCore
import CountersignCrypto
import CountersignPostgres
import Foundation

/// Where a page of a listing ended: the list's name, the last row's timestamp, as PostgreSQL
/// wrote it (so that paging compares exactly), and its id. Clients see it as opaque base64url
/// text. The name makes another list's cursor `invalid_query`, not a page from a wrong place.
struct PageCursor: Sendable {
    var list: String
    /// PostgreSQL's text of a `timestamptz`, or `-infinity` for a row without a time.
    var at: String
    var id: UUID

    init(list: String, at: String, id: UUID) {
        self.list = list
        self.at = at
        self.id = id
    }

    /// Reads a cursor this service gave out for `list`; anything else is `invalid_query`.
    init(text: String, list: String) throws {
        guard let decoded = CursorText.decode(text, maxLength: 200) else { throw Self.refused }
        let parts = decoded.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == list, Self.isPostgresTimestamp(parts[1]), let id = UUID(text: String(parts[2])) else {
            throw Self.refused
        }
        self.init(list: list, at: String(parts[1]), id: id)
    }

    var text: String {
        CursorText.encode("\(list)|\(at)|\(id.text)")
    }

    /// The name of a filtered listing in its cursors: `list` and a digest of the tenant and the
    /// filters. A cursor sent with other filters, or by another tenant, is then `invalid_query`,
    /// not a page that silently starts at the position of another listing.
    static func list(_ list: String, tenantID: UUID, filters: [String?]) -> String {
        // A filter left out is not the empty text, and each value is kept apart from the next.
        let scope = ([tenantID.text] + filters.map { $0.map { "=" + $0 } ?? "-" }).joined(separator: "\u{0}")
        return list + ":" + Array(Digest.hash(.sha256, scope).prefix(8)).hexString
    }

    /// Reads the cursor `text` (if any) of `list` and runs the page's query after it.
    static func paging<Page>(_ list: String, after text: String?, _ query: (PageCursor?) async throws -> Page) async throws -> Page {
        let position = try text.map { try PageCursor(text: $0, list: list) }
        return try await reading(withCursor: position != nil) { try await query(position) }
    }

    /// The page of `rows` of `list`, read with `LIMIT limit + 1` and each with `id` and
    /// `cursor_at`: the first `limit` entries, and the cursor after the last of them when
    /// another row follows.
    static func page<Entry>(_ list: String, of rows: [PostgresRow], limit: Int, _ entry: (PostgresRow) throws -> Entry) throws -> (entries: [Entry], next: String?) {
        let shown = rows.prefix(limit)
        let entries = try shown.map(entry)
        guard rows.count > limit, let last = shown.last else { return (entries, nil) }
        return (entries, PageCursor(list: list, at: try last.decode("cursor_at"), id: try last.decode("id")).text)
    }

    /// Runs the page's query; a cursor whose time has the shape of one but is no time PostgreSQL
    /// knows (month 99, say) makes it raise a data exception, which is the cursor's fault.
    static func reading<Page>(withCursor: Bool, _ query: () async throws -> Page) async throws -> Page {
        do {
            return try await query()
        } catch let error as PostgresError where withCursor && error.sqlState?.hasPrefix("22") == true {
            throw refused
        }
    }

    static let refused = CountersignError(.invalidQuery, "'cursor' is not a cursor this service gave out")

    /// The shape of a `timestamptz` as PostgreSQL writes it, a year before 1 (a certificate's
    /// `notAfter` may be one) ending in ` BC`.
    static func isPostgresTimestamp(_ text: Substring) -> Bool {
        let time = text.hasSuffix(" BC") ? text.dropLast(3) : text
        return text == "-infinity" || (time.count >= 19 && time.count <= 40 && time.allSatisfy { $0.isNumber || "-:. +".contains($0) })
    }
}

/// The text form of a cursor: its plain text in base64url without padding, opaque to clients.
enum CursorText {
    static func encode(_ plain: String) -> String {
        Data(plain.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The plain text of a cursor at most `maxLength` characters long; `nil` for anything else.
    static func decode(_ text: String, maxLength: Int) -> String? {
        guard text.count <= maxLength else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).flatMap { String(data: $0, encoding: .utf8) }
    }
}
