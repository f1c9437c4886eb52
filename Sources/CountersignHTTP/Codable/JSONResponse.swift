import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// JSON responses with the encoder settings every endpoint shares.
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        let body: ByteBuffer
        if let text = value as? any JSONTextRepresentable {
            body = ByteBuffer(string: text.jsonText)
        } else {
            body = ByteBuffer(bytes: try APIJSONEncoder().encode(value))
        }
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }

    /// The error response, with `errorBody(error)`.
    static func error(_ error: CountersignError) -> Response {
        var headers: HTTPFields = [:]
        if error.code.kind == .unauthenticated {
            headers[.wwwAuthenticate] = "Bearer realm=\"countersign\""
        }
        headers[.contentType] = "application/json; charset=utf-8"
        if error.code == .bodyTooLarge || error.code == .malformedBody {
            // The rest of the body is unwanted or unreadable: the connection goes with it.
            headers[.connection] = "close"
        }
        return Response(status: error.code.kind.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: errorBody(error))))
    }

    /// The error body: `{"error": {"code": "...", "message": "..."}}`.
    static func errorBody(_ error: CountersignError) -> [UInt8] {
        struct Body: Encodable {
            struct Detail: Encodable {
                var code: String
                var message: String
            }
            var error: Detail
        }
        // Encoding two strings cannot fail; if it somehow did, the code alone still says what failed.
        return (try? APIJSONEncoder().encode(Body(error: .init(code: error.code.rawValue, message: error.message))))
            ?? Array(#"{"error":{"code":"\#(error.code.rawValue)","message":""}}"#.utf8)
    }
}
