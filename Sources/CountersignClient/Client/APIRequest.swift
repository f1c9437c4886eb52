import Foundation

/// One call of the contract: everything ``CountersignClient/send(_:)`` needs to make it, check
/// its answer and decide about retries. Each operation builds one in its own file
/// (`CountersignClient+<Feature>.swift`), so a new operation is one small file.
struct APIRequest<Response: Decodable & Sendable>: Sendable {
    /// The contract's `operationId`, for error messages.
    var operation: String
    var method: String
    /// Below the base URL, e.g. `v1/sessions/<id>/challenges`.
    var path: String
    /// Query parameters, if any.
    var query: [URLQueryItem] = []
    var body: Data?
    var safety: RetryPolicy.Safety
    /// Statuses that carry a `Response`.
    var success: Set<Int>

    init(operation: String, method: String, path: String, safety: RetryPolicy.Safety, success: Set<Int> = [200]) {
        self.operation = operation
        self.method = method
        self.path = path
        self.safety = safety
        self.success = success
    }

    init(operation: String, method: String, path: String, json: some Encodable, safety: RetryPolicy.Safety, success: Set<Int> = [200])
        throws(CountersignClientError)
    {
        self.init(operation: operation, method: method, path: path, safety: safety, success: success)
        do {
            body = try JSONCoding.encoder().encode(json)
        } catch {
            throw .invalidRequest("the body of \(operation) could not be encoded")
        }
    }
}
