import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Reads a JSON request body into a request type, turning every way it can be wrong into a
/// 4xx `CountersignError` that names the field.
struct JSONBody: Sendable {
    /// Largest body accepted, in bytes.
    let limit: Int

    func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        if let contentType = request.headers[.contentType], !Self.isJSON(contentType) {
            throw CountersignError(.unsupportedMediaType, "send the body as application/json")
        }
        // A declared length over the limit is refused before a byte of the body is waited for.
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw CountersignError(.bodyTooLarge, "the request body is larger than \(limit) bytes")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw CountersignError(.bodyTooLarge, "the request body is larger than \(limit) bytes")
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw CountersignError(.bodyTooLarge, "the request body is larger than \(limit) bytes")
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // The HTTP framing of the body was wrong (a chunk size that is no number, say), or the
            // connection ended before the body did: the client's doing, not a server failure.
            throw CountersignError(.malformedBody, "the request body could not be read: its HTTP framing is invalid or it ended early")
        }
        return try Self.decode(type, from: Array(buffer.readableBytesView))
    }

    /// Decodes a body already read, with the same errors as a request's.
    static func decode<T: Decodable>(_ type: T.Type, from text: [UInt8]) throws -> T {
        guard !text.isEmpty else {
            throw CountersignError(.malformedJSON, "the request body is empty; send a JSON object")
        }
        do {
            return try JSONTreeDecoder.decode(type, from: text)
        } catch let error as JSONSyntaxError {
            throw CountersignError(.malformedJSON, "the request body is not valid JSON: \(error)")
        } catch let error as DecodingError {
            throw Self.describe(error)
        }
    }

    /// `application/json` or `application/<anything>+json`, any case, parameters ignored.
    /// `application/json` or `application/*+json`, in UTF-8 (RFC 8259 §8.1): a `charset`
    /// parameter naming anything else is refused rather than read as UTF-8 regardless.
    static func isJSON(_ contentType: String) -> Bool {
        // The forms clients send, answered without parsing: this runs on every challenge.
        if contentType == "application/json" || contentType == "application/json; charset=utf-8" { return true }
        let parts = contentType.lowercased().split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let mediaType = parts.first, mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
        else { return false }
        return parts.dropFirst().allSatisfy { parameter in
            guard parameter.hasPrefix("charset=") else { return true }
            let charset = parameter.dropFirst("charset=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return charset == "utf-8" || charset == "utf8"
        }
    }

    static func describe(_ error: DecodingError) -> CountersignError {
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return CountersignError(.malformedJSON, "the request body is not valid JSON")
        case .dataCorrupted(let context) where context.debugDescription.hasPrefix(JSONDecodingState.numberOutOfRange):
            return CountersignError(.invalidField, "\(FieldPath(context.codingPath)) is a number out of range")
        case .dataCorrupted(let context) where context.debugDescription == JSONDecodingState.invalidUUID:
            return CountersignError(.invalidField, "\(FieldPath(context.codingPath)) must be a UUID")
        case .dataCorrupted(let context):
            return CountersignError(.invalidField, "\(FieldPath(context.codingPath)) has an invalid value")
        case .keyNotFound(let key, let context):
            return CountersignError(.missingField, "\(FieldPath(context.codingPath + [key])) is required")
        case .valueNotFound(_, let context):
            return CountersignError(.missingField, "\(FieldPath(context.codingPath)) must not be null")
        case .typeMismatch(let type, let context):
            return CountersignError(.invalidFieldType, "\(FieldPath(context.codingPath)) must be \(Self.jsonTypeName(type))")
        @unknown default:
            return CountersignError(.malformedJSON, "the request body could not be read")
        }
    }

    static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type, is UUID.Type, is Date.Type: "a string"
        case is Bool.Type: "a boolean"
        case is any FixedWidthInteger.Type: "an integer"
        case is any BinaryFloatingPoint.Type: "a number"
        default:
            String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }
}
