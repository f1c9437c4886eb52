import CountersignCore
import Foundation
import Testing

@Suite("Timestamps")
struct TimestampTests {
    @Test(arguments: ["2026-11-23T07:51:07Z", "2026-11-23T07:51:07.581Z", "2024-02-29T00:00:00Z", "2026-11-23T23:59:59+13:00", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999999Z"])
    func possibleTimesParse(_ text: String) {
        #expect(Timestamp.parse(text) != nil)
    }

    /// What RFC 3339 allows beyond what Foundation's parser reads: offsets up to ±23:59, any
    /// number of fraction digits, and the leap second at the end of a UTC day.
    @Test(arguments: [
        ("2026-11-23T07:51:07+23:59", "2026-11-22T07:52:07Z"),
        ("2026-11-23T07:51:07-19:30", "2026-11-24T03:21:07Z"),
        ("2026-11-23T07:51:07.1234567891234Z", "2026-11-23T07:51:07.123456789Z"),
        ("2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z"),
        ("2016-12-31T18:59:60-05:00", "2017-01-01T00:00:00Z"),
    ])
    func everyRFC3339TimeParses(_ text: String, _ same: String) throws {
        let parsed = try #require(Timestamp.parse(text))
        #expect(abs(parsed.timeIntervalSince(try #require(Timestamp.parse(same)))) < 0.000_001)
    }

    /// From 1583 on: before, Foundation's calendar is the Julian one, where RFC 3339 and
    /// PostgreSQL keep the Gregorian.
    @Test func readsAsFoundationDoesWhereBothRead() throws {
        for _ in 0..<2000 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: -12_212_553_600...253_402_214_399)) + Double(Int.random(in: 0..<1000)) / 1000)
            let offset = Int.random(in: -18...18) * 3600 + Int.random(in: 0...3) * 15 * 60 * (Bool.random() ? 1 : 0)
            let clamped = max(-18 * 3600, min(18 * 3600, offset))
            let style = Date.ISO8601FormatStyle(timeZoneSeparator: .colon, includingFractionalSeconds: true, timeZone: try #require(TimeZone(secondsFromGMT: clamped)))
            let text = date.formatted(style)
            let foundation = try style.parse(text)
            let parsed = try #require(Timestamp.parse(text), "\(text)")
            #expect(abs(parsed.timeIntervalSince(foundation)) < 0.000_1, "\(text)")
        }
    }

    @Test(arguments: [
        "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-11-23T24:00:00Z", "2026-11-23T23:60:00Z", "2026-11-23T22:59:60Z", "2026-11-23T23:59:60+01:00", "2026-11-23T23:59:61Z",
        "2026-11-00T00:00:00Z", "yesterday", "", "2026-11-23T07:51:07", "2026-11-23T07:51:07.Z", "2026-11-23T07:51:07+24:00",
        "2026-11-23T07:51:07+05:60", "2026-11-23T07:51:07+0500", "2026-11-23 07:51:07Z", "2026-11-23T07:51:07Z ", "+2026-11-23T07:51:07Z",
        "2026-1-23T07:51:07Z", "２026-11-23T07:51:07Z",
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

    /// Written in the calendar they are read in, and PostgreSQL's: the proleptic Gregorian one,
    /// before 1582 too (a certificate may be dated there), where Foundation's turns Julian.
    @Test(arguments: [
        ("0000-01-01T00:00:00.000Z", -62_167_219_200.0), ("0001-01-02T00:00:00.000Z", -62_135_510_400.0),
        ("1500-03-01T12:00:00.250Z", -14_826_628_799.75), ("1582-10-10T00:00:00.000Z", -12_219_724_800.0),
        ("1969-12-31T23:59:59.999Z", -0.001), ("9999-12-31T23:59:59.999Z", 253_402_300_799.999),
    ])
    func earlyAndLateTimesAreWrittenGregorian(_ text: String, _ seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(Timestamp.format(date) == text)
        #expect(abs(try #require(Timestamp.parse(text)).timeIntervalSince(date)) < 0.000_001)
    }

    /// Every second of the four-digit years, and every millisecond of this era's: a Double holds
    /// the milliseconds of a time far from 1970 only approximately, but certificates' times are
    /// whole seconds.
    @Test func timesRoundTripAcrossTheFourDigitYears() throws {
        for _ in 0..<5000 {
            let second = Int64.random(in: -62_167_219_200...253_402_300_799)
            let millisecond = Int64.random(in: 0...4_102_444_800_000)
            for (milliseconds, text) in [
                (second * 1000, Timestamp.format(Date(timeIntervalSince1970: Double(second)))),
                (millisecond, Timestamp.format(Date(timeIntervalSince1970: Double(millisecond) / 1000))),
            ] {
                let parsed = try #require(Timestamp.parse(text), "\(text)")
                #expect(Int64((parsed.timeIntervalSince1970 * 1000).rounded()) == milliseconds, "\(text)")
            }
        }
    }
}
