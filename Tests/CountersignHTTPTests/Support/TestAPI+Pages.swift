import Foundation
import Testing

extension TestAPI {
    /// Every entry of a paged listing, read `limit` at a time by following `nextCursor`, and how
    /// many pages that took.
    func allPages(
        _ path: String,
        _ name: String,
        key: String,
        limit: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (entries: [[String: Any]], pages: Int) {
        var entries: [[String: Any]] = []
        var cursor: String?
        var pages = 0
        repeat {
            let separator = path.contains("?") ? "&" : "?"
            let page = try await call(.get, "\(path)\(separator)limit=\(limit)" + (cursor.map { "&cursor=\($0)" } ?? ""), key: key, sourceLocation: sourceLocation)
            try #require(page.status == 200, "\(page)", sourceLocation: sourceLocation)
            let items = try #require(page[name] as? [[String: Any]], sourceLocation: sourceLocation)
            #expect(items.count <= limit, sourceLocation: sourceLocation)
            entries += items
            cursor = page.string("nextCursor")
            pages += 1
        } while cursor != nil && pages < 1000
        return (entries, pages)
    }
}
