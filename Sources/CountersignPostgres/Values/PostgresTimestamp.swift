import CountersignCore
import Foundation

/// Timestamps in the text forms PostgreSQL reads and (with `DateStyle = ISO`) writes.
///
/// Hand-written rather than `DateFormatter`/`ISO8601FormatStyle`: microsecond precision,
/// years outside 1...9999, BC dates and odd offsets (`+05:30:15`) all need handling,
/// and the result must not depend on the process's locale or time zone.
enum PostgresTimestamp {
    private static let microsecondsPerSecond: Int64 = 1_000_000
    private static let secondsPerDay: Int64 = 86_400

    /// `2024-02-29T13:04:05.123456Z` (UTC, microseconds; ` BC` appended before year 1).
    static func format(_ date: Date) -> String {
        let microseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let seconds = CivilDate.floorDivide(microseconds, microsecondsPerSecond)
        let fraction = microseconds - seconds * microsecondsPerSecond
        let days = CivilDate.floorDivide(seconds, secondsPerDay)
        let secondOfDay = seconds - days * secondsPerDay
        let (year, month, day) = CivilDate.date(daysSince1970: days)

        // PostgreSQL has no year 0: astronomical year 0 is 1 BC.
        let isBC = year <= 0
        let displayYear = isBC ? 1 - year : year
        var text = CivilDate.padded(displayYear, 4) + "-" + CivilDate.padded(month, 2) + "-" + CivilDate.padded(day, 2)
        text += "T" + CivilDate.padded(secondOfDay / 3600, 2) + ":" + CivilDate.padded(secondOfDay / 60 % 60, 2) + ":" + CivilDate.padded(secondOfDay % 60, 2)
        text += "." + CivilDate.padded(fraction, 6) + "Z"
        if isBC { text += " BC" }
        return text
    }

    /// Parses `timestamptz` / `timestamp` / `date` output: `YYYY-MM-DD[( |T)HH:MM:SS[.f*]][Z|±HH[:MM[:SS]]][ BC]`.
    /// A value without an offset is taken as UTC. Returns nil for anything else,
    /// `infinity` included.
    static func parse(_ text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))

        guard var year = scanner.integer(minDigits: 4, maxDigits: 9), scanner.consume(UInt8(ascii: "-")),
            let month = scanner.integer(minDigits: 2, maxDigits: 2), scanner.consume(UInt8(ascii: "-")),
            let day = scanner.integer(minDigits: 2, maxDigits: 2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }

        var secondOfDay: Int64 = 0
        var microseconds: Int64 = 0
        var offsetSeconds: Int64 = 0

        if scanner.consume(UInt8(ascii: " ")) || scanner.consume(UInt8(ascii: "T")) {
            if scanner.peekIsDigit {
                guard let hour = scanner.integer(minDigits: 2, maxDigits: 2), scanner.consume(UInt8(ascii: ":")),
                    let minute = scanner.integer(minDigits: 2, maxDigits: 2), scanner.consume(UInt8(ascii: ":")),
                    let second = scanner.integer(minDigits: 2, maxDigits: 2),
                    hour <= 24, minute < 60, second < 61
                else { return nil }
                secondOfDay = hour * 3600 + minute * 60 + second
                if scanner.consume(UInt8(ascii: ".")) {
                    var digits = 0
                    while let digit = scanner.digit() {
                        if digits < 6 { microseconds = microseconds * 10 + digit }
                        digits += 1
                    }
                    guard digits > 0 else { return nil }
                    if digits < 6 {
                        for _ in digits..<6 { microseconds *= 10 }
                    }
                }
                if scanner.consume(UInt8(ascii: "Z")) {
                    offsetSeconds = 0
                } else if let sign = scanner.sign() {
                    guard let hours = scanner.integer(minDigits: 2, maxDigits: 2) else { return nil }
                    var offset = hours * 3600
                    if scanner.consume(UInt8(ascii: ":")) {
                        guard let minutes = scanner.integer(minDigits: 2, maxDigits: 2) else { return nil }
                        offset += minutes * 60
                        if scanner.consume(UInt8(ascii: ":")) {
                            guard let seconds = scanner.integer(minDigits: 2, maxDigits: 2) else { return nil }
                            offset += seconds
                        }
                    }
                    offsetSeconds = sign * offset
                }
                _ = scanner.consume(UInt8(ascii: " "))
            } else {
                scanner.unconsume()
            }
        }
        if scanner.consume(text: " BC") || scanner.consume(text: "BC") {
            year = 1 - year
        }
        guard scanner.isAtEnd else { return nil }

        let days = CivilDate.daysSince1970(year: year, month: month, day: day)
        let seconds = days * secondsPerDay + secondOfDay - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + Double(microseconds) / 1_000_000)
    }
}

/// A cursor over ASCII bytes for the timestamp parser.
private struct Scanner {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { index == bytes.count }

    var peekIsDigit: Bool {
        index < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index])
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    mutating func consume(text: String) -> Bool {
        let expected = Array(text.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
            return false
        }
        index += expected.count
        return true
    }

    mutating func unconsume() {
        index -= 1
    }

    mutating func digit() -> Int64? {
        guard peekIsDigit else { return nil }
        defer { index += 1 }
        return Int64(bytes[index] - UInt8(ascii: "0"))
    }

    mutating func integer(minDigits: Int, maxDigits: Int) -> Int64? {
        var value: Int64 = 0
        var count = 0
        while count < maxDigits, let digit = digit() {
            value = value * 10 + digit
            count += 1
        }
        return count >= minDigits ? value : nil
    }

    mutating func sign() -> Int64? {
        if consume(UInt8(ascii: "+")) { return 1 }
        if consume(UInt8(ascii: "-")) { return -1 }
        return nil
    }
}
