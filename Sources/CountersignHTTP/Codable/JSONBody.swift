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

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            guard let date = Timestamp.parse(try container.decode(String.self)) else {
                throw CountersignError(.invalidField, "\(FieldPath(decoder.codingPath)) must be an RFC 3339 date-time")
            }
            return date
        }
        return decoder
    }()

    func decode<T: Codable>(_ type: T.Type, from request: Request) async throws -> T {
        if let contentType = request.headers[.contentType], !Self.isJSON(contentType) {
            throw CountersignError(.unsupportedMediaType, "send the body as application/json")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw CountersignError(.bodyTooLarge, "the request body is larger than \(limit) bytes")
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw CountersignError(.bodyTooLarge, "the request body is larger than \(limit) bytes")
        }
        let data = Data(buffer.readableBytesView)
        guard !data.isEmpty else {
            throw CountersignError(.malformedJSON, "the request body is empty; send a JSON object")
        }
        let value: T
        do {
            value = try Self.decoder.decode(T.self, from: data)
        } catch let error as DecodingError {
            throw Self.describe(error)
        }
        try Self.rejectUnknownFields(in: data, decoded: value)
        return value
    }

    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";", maxSplits: 1)[0].trimmingCharacters(in: .whitespaces).lowercased()
        return mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
    }

    static func describe(_ error: DecodingError) -> CountersignError {
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return CountersignError(.malformedJSON, "the request body is not valid JSON")
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
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt16.Type, is UInt.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        default:
            String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }

    /// Unknown fields are refused rather than ignored: a misspelt field in a policy would
    /// otherwise silently mean its default. The decoded value is encoded again, and every key
    /// the client sent (with a non-null value) must appear in it.
    static func rejectUnknownFields(in data: Data, decoded: some Encodable) throws {
        guard let sent = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            let understood = try? JSONSerialization.jsonObject(with: JSONResponse.encoder.encode(decoded), options: [.fragmentsAllowed])
        else { return }
        if let path = firstUnknownKey(sent: sent, understood: understood, path: "") {
            throw CountersignError(.unknownField, "'\(path)' is not a known field")
        }
    }

    private static func firstUnknownKey(sent: Any, understood: Any, path: String) -> String? {
        switch (sent, understood) {
        case (let sent as [String: Any], let understood as [String: Any]):
            for key in sent.keys.sorted() {
                let value = sent[key]!
                if value is NSNull { continue }
                let childPath = path.isEmpty ? key : "\(path).\(key)"
                guard let known = understood[key] else { return childPath }
                if let found = firstUnknownKey(sent: value, understood: known, path: childPath) { return found }
            }
        case (let sent as [Any], let understood as [Any]) where sent.count == understood.count:
            for (index, pair) in zip(sent, understood).enumerated() {
                if let found = firstUnknownKey(sent: pair.0, understood: pair.1, path: "\(path)[\(index)]") { return found }
            }
        default:
            break
        }
        return nil
    }
}
