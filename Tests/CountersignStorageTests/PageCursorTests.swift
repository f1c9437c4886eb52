import CountersignCore
@testable import CountersignStorage
import Foundation
import Testing

@Suite("Page cursors")
struct PageCursorTests {
    /// A cursor at whatever time PostgreSQL wrote for the last row of a page is taken back; a
    /// certificate's `notAfter` may be before year 1, which it writes with ` BC`.
    @Test(arguments: ["2026-11-28 10:15:38.127+00", "-infinity", "0001-01-02 00:00:00+00 BC", "0001-01-02 00:00:00.5+00 BC"])
    func aCursorGivenOutIsTakenBack(_ at: String) throws {
        let cursor = PageCursor(list: "identities", at: at, id: UUID())
        let read = try PageCursor(text: cursor.text, list: "identities")
        #expect(read.at == at && read.id == cursor.id)
    }

    @Test(arguments: ["yesterday", "2026-11-28 10:15:38+00 AD", " BC", "2026-11-28 10:15:38+00 BC BC", "2026-11-28'; --"])
    func aTimeOfAnotherShapeIsRefused(_ at: String) {
        #expect(throws: CountersignError.self) { try PageCursor(text: PageCursor(list: "identities", at: at, id: UUID()).text, list: "identities") }
    }
}
