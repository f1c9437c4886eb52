import Foundation

/// The JSON dialect of the contract: RFC 3339 timestamps (milliseconds, UTC), base64 bytes.
enum JSONCoding {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(withFractions))
        }
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? withFractions.parse(text) { return date }
            if let date = try? withoutFractions.parse(text) { return date }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 timestamp")
        }
        return decoder
    }

    private static let withFractions = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFractions = Date.ISO8601FormatStyle()
}
