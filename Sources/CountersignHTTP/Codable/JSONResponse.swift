import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// JSON responses with the encoder settings every endpoint shares.
enum JSONResponse {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.format(date))
        }
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()

    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        let data: Data
        if let text = value as? any JSONTextRepresentable {
            data = Data(text.jsonText.utf8)
        } else {
            data = try encoder.encode(value)
        }
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The error body: `{"error": {"code": "...", "message": "..."}}`.
    static func error(_ error: CountersignError) -> Response {
        struct Body: Encodable {
            struct Detail: Encodable {
                var code: String
                var message: String
            }
            var error: Detail
        }
        var headers: HTTPFields = [:]
        if error.code.kind == .unauthenticated {
            headers[.wwwAuthenticate] = "Bearer realm=\"countersign\""
        }
        // Encoding two strings cannot fail; if it somehow did, an empty 500 is all that is left.
        return (try? make(Body(error: .init(code: error.code.rawValue, message: error.message)), status: error.code.kind.status, headers: headers))
            ?? Response(status: .internalServerError)
    }
}

/// Timestamps in responses: RFC 3339 in UTC with milliseconds, so that two decisions within
/// one second still sort.
enum Timestamp {
    static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    static let withoutFraction = Date.ISO8601FormatStyle()

    static func format(_ date: Date) -> String {
        date.formatted(withFraction)
    }

    /// Accepts RFC 3339 timestamps with or without fractional seconds.
    static func parse(_ text: String) -> Date? {
        (try? withFraction.parse(text)) ?? (try? withoutFraction.parse(text))
    }
}
