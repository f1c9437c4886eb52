import CountersignCore
import CountersignPostgres
import Foundation

/// Where a page of a newest-first listing ended: the last row's timestamp, as PostgreSQL wrote it
/// (so that paging compares exactly), and its id. Clients see it as opaque base64url text.
struct PageCursor: Sendable {
    /// PostgreSQL's text of a `timestamptz`, or `-infinity` for a row without a time.
    var at: String
    var id: UUID

    init(at: String, id: UUID) {
        self.at = at
        self.id = id
    }

    /// Reads a cursor this service gave out; anything else is `invalid_query`.
    init(text: String) throws {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.count <= 200, let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8),
            let separator = decoded.lastIndex(of: "|"), let id = UUID(text: String(decoded[decoded.index(after: separator)...])),
            Self.isPostgresTimestamp(decoded[..<separator])
        else {
            throw Self.refused
        }
        self.init(at: String(decoded[..<separator]), id: id)
    }

    var text: String {
        Data("\(at)|\(id.text)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Runs the page's query; a cursor whose time has the shape of one but is no time PostgreSQL
    /// knows (month 99, say) makes it raise a data exception, which is the cursor's fault.
    static func reading<Page>(after cursor: PageCursor?, _ query: () async throws -> Page) async throws -> Page {
        do {
            return try await query()
        } catch let error as PostgresError where cursor != nil && error.sqlState?.hasPrefix("22") == true {
            throw refused
        }
    }

    private static let refused = CountersignError(.invalidQuery, "'cursor' is not a cursor this service gave out")

    private static func isPostgresTimestamp(_ text: Substring) -> Bool {
        text == "-infinity" || (text.count >= 19 && text.count <= 40 && text.allSatisfy { $0.isNumber || "-:. +".contains($0) })
    }
}
