import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// JSON responses with the encoder settings every endpoint shares.
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        let bytes: [UInt8]
        if let text = value as? any JSONTextRepresentable {
            bytes = Array(text.jsonText.utf8)
        } else {
            bytes = try APIJSONEncoder().encode(value)
        }
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
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
