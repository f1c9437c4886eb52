public import Foundation

/// Timestamps in responses: RFC 3339 in UTC with milliseconds, so that two decisions within
/// one second still sort.
public enum Timestamp {
    public static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    public static let withoutFraction = Date.ISO8601FormatStyle()

    /// The time to the millisecond, truncated (a time is never shown later than it was).
    public static func format(_ date: Date) -> String {
        // The formatter truncates, and a time on a millisecond (a client's `.129`, PostgreSQL's
        // `.129000`) can sit a hair below it as a Double and would print as `.128`. Times carry
        // at most microseconds, so anything within half a microsecond of the next millisecond
        // is on it; the middle of the millisecond then formats as that millisecond.
        let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.0005).rounded(.down)
        return Date(timeIntervalSince1970: (milliseconds + 0.5) / 1000).formatted(withFraction)
    }

    /// Accepts RFC 3339 timestamps with or without fractional seconds.
    public static func parse(_ text: String) -> Date? {
        // RFC 3339 §5.6 allows "t" and "z" for "T" and "Z"; Foundation's parser does not.
        let text = text.uppercased()
        guard namesAPossibleTime(text) else { return nil }
        return (try? withFraction.parse(text)) ?? (try? withoutFraction.parse(text))
    }

    /// Foundation's parser rolls impossible fields over (February 30 reads as March 2, 24:00 as
    /// the next day); RFC 3339 has no such times, so neither does the API.
    private static func namesAPossibleTime(_ text: String) -> Bool {
        let bytes = Array(text.utf8.prefix(19))
        func number(_ range: Range<Int>) -> Int? {
            guard bytes.count >= range.upperBound else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), hour <= 23, minute <= 59, second <= 59
        else { return false }
        let isLeapYear = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let daysInMonth = [31, isLeapYear ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...daysInMonth).contains(day)
    }
}
