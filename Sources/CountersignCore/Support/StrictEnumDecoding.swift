/// Decoding for the string enums of the API that names the field and the allowed values
/// when a client sends something else, instead of Foundation's generic "data corrupted".
public protocol StrictStringEnum: RawRepresentable, CaseIterable, Codable, Sendable where RawValue == String {}

extension StrictStringEnum {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let value = Self(rawValue: raw) else {
            throw CountersignError(
                .invalidEnumValue,
                "\(FieldPath(decoder.codingPath)) must be one of \(Self.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A coding path printed the way a client wrote it: `rules[2].match.port`.
public struct FieldPath: CustomStringConvertible, Sendable {
    public let description: String

    public init(_ codingPath: [any CodingKey]) {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                // A member may be named by the empty string; it must not read as the body itself.
                let name = key.stringValue.isEmpty ? #""""# : key.stringValue
                text += text.isEmpty ? name : ".\(name)"
            }
        }
        description = codingPath.isEmpty ? "the body" : "'\(text)'"
    }
}
