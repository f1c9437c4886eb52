import CountersignCore
import Foundation
import Testing

@Suite("Timestamps")
struct TimestampTests {
    @Test(arguments: ["2026-11-23T07:51:07Z", "2026-11-23T07:51:07.581Z", "2024-02-29T00:00:00Z", "2026-11-23T23:59:59+13:00"])
    func possibleTimesParse(_ text: String) {
        #expect(Timestamp.parse(text) != nil)
    }

    @Test(arguments: [
        "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-11-23T24:00:00Z", "2026-11-23T23:60:00Z", "2026-11-23T23:59:60Z", "2026-11-00T00:00:00Z", "yesterday", "",
    ])
    func impossibleTimesAreRefusedNotRolledOver(_ text: String) {
        #expect(Timestamp.parse(text) == nil)
    }

    @Test func lowercaseTAndZAreTheSameTime() {
        #expect(Timestamp.parse("2026-11-23t07:51:07.5z") == Timestamp.parse("2026-11-23T07:51:07.5Z"))
        #expect(Timestamp.parse("2026-11-23t07:51:07z") != nil)
    }

    @Test func formatAndParseRoundTrip() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123)
        let parsed = try #require(Timestamp.parse(Timestamp.format(date)))
        #expect(abs(parsed.timeIntervalSince(date)) < 0.001)
    }

    @Test func aTimeOnAMillisecondFormatsAsThatMillisecond() throws {
        for millisecond in 0..<1000 {
            let fraction = String(millisecond + 1000).dropFirst()
            let text = "2026-11-23T11:56:16.\(fraction)Z"
            #expect(Timestamp.format(try #require(Timestamp.parse(text))) == text)
        }
    }

    @Test func formattingTruncatesToTheMillisecond() {
        let date = Date(timeIntervalSince1970: 1_795_000_000.129_691)
        #expect(Timestamp.format(date).hasSuffix(".129Z"))
        #expect(Timestamp.format(Date(timeIntervalSince1970: 1_795_000_000.999_9)).hasSuffix(":40.999Z"))
    }
}
