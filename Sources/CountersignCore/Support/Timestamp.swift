public import Foundation

/// Timestamps in responses: RFC 3339 in UTC with milliseconds, so that two decisions within
/// one second still sort.
public enum Timestamp {
    public static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    public static let withoutFraction = Date.ISO8601FormatStyle()

    public static func format(_ date: Date) -> String {
        date.formatted(withFraction)
    }

    /// Accepts RFC 3339 timestamps with or without fractional seconds.
    public static func parse(_ text: String) -> Date? {
        (try? withFraction.parse(text)) ?? (try? withoutFraction.parse(text))
    }
}
