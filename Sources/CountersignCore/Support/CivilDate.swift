/// Dates of the proleptic Gregorian calendar, the one RFC 3339 and PostgreSQL count in (year 0
/// is 1 BC), to and from days since 1970-01-01: Howard Hinnant's `days_from_civil` and
/// `civil_from_days`. Foundation's calendar turns Julian before October 1582.
public enum CivilDate {
    public static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    public static func date(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Division rounding toward minus infinity, as days before 1970 need.
    public static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let (quotient, remainder) = a.quotientAndRemainder(dividingBy: b)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// `value` in decimal, zero-padded to `width` digits (a minus sign before them).
    public static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value.magnitude)
        return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
