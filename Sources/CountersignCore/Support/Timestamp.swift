public import Foundation

/// The API's timestamps: written RFC 3339 in UTC with milliseconds, so that two decisions within
/// one second still sort; read in any RFC 3339 form.
public enum Timestamp {
    /// The time to the millisecond, truncated (a time is never shown later than it was), in the
    /// proleptic Gregorian calendar (``CivilDate``) that ``parse(_:)`` and PostgreSQL use.
    public static func format(_ date: Date) -> String {
        // A time on a millisecond (a client's `.129`, PostgreSQL's `.129000`) can sit a hair below
        // it as a Double and would truncate to `.128`. Times carry at most microseconds, so
        // anything within half a microsecond of the next millisecond is on it.
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000 + 0.0005).rounded(.down))
        let seconds = CivilDate.floorDivide(milliseconds, 1000)
        let days = CivilDate.floorDivide(seconds, 86400)
        let secondOfDay = seconds - days * 86400
        let (year, month, day) = CivilDate.date(daysSince1970: days)
        return CivilDate.padded(year, 4) + "-" + CivilDate.padded(month, 2) + "-" + CivilDate.padded(day, 2)
            + "T" + CivilDate.padded(secondOfDay / 3600, 2) + ":" + CivilDate.padded(secondOfDay / 60 % 60, 2) + ":" + CivilDate.padded(secondOfDay % 60, 2)
            + "." + CivilDate.padded(milliseconds - seconds * 1000, 3) + "Z"
    }

    /// Reads any RFC 3339 date-time (§5.6): `T` or `t`, `Z` or `z` or an offset up to ±23:59,
    /// fractional seconds of any length (kept to the nanosecond), and a leap second (`:60`,
    /// which §5.7 allows only as the last second of a UTC day, read as the next day's start).
    /// Impossible fields are refused, not rolled over: February 30 is no time.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard bytes.count >= range.upperBound else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(at index: Int, is accepted: String) -> Bool {
            index < bytes.count && accepted.utf8.contains(bytes[index])
        }
        guard let year = number(0..<4), byte(at: 4, is: "-"), let month = number(5..<7), byte(at: 7, is: "-"),
            let day = number(8..<10), byte(at: 10, is: "Tt"), let hour = number(11..<13), byte(at: 13, is: ":"),
            let minute = number(14..<16), byte(at: 16, is: ":"), let second = number(17..<19),
            (1...12).contains(month), (1...daysIn(month, of: year)).contains(day), hour <= 23, minute <= 59, second <= 60
        else { return nil }

        var index = 19
        var nanoseconds = 0
        if byte(at: index, is: ".") {
            index += 1
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                if index - start < 9 { nanoseconds = nanoseconds * 10 + Int(bytes[index] - UInt8(ascii: "0")) }
                index += 1
            }
            guard index > start else { return nil }
            for _ in min(index - start, 9)..<9 { nanoseconds *= 10 }
        }

        let offsetSeconds: Int
        if byte(at: index, is: "Zz") {
            offsetSeconds = 0
            index += 1
        } else if byte(at: index, is: "+-"), byte(at: index + 3, is: ":"),
            let offsetHours = number(index + 1..<index + 3), let offsetMinutes = number(index + 4..<index + 6),
            offsetHours <= 23, offsetMinutes <= 59
        {
            offsetSeconds = (bytes[index] == UInt8(ascii: "-") ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60)
            index += 6
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }

        let seconds = Int(CivilDate.daysSince1970(year: Int64(year), month: Int64(month), day: Int64(day))) * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds
        if second == 60 {
            // The second before it must be the UTC day's last.
            guard (seconds - 1) % 86400 == 86399 || (seconds - 1) % 86400 == -1 else { return nil }
        }
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1_000_000_000)
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        let isLeapYear = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, isLeapYear ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }
}
