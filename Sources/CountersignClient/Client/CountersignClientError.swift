public import Foundation

/// Everything a ``CountersignClient`` call can fail with.
///
/// No case ever carries the API key, a request body or a response body: a body may hold a secret
/// (a released password), and an error ends up in logs.
public enum CountersignClientError: Error, Sendable, Hashable {
    /// The service answered with an error: its HTTP status and the stable `code` and safe
    /// `message` of its `{"error": {...}}` body. A response that is not such a body (a proxy's
    /// HTML page, say) gets the code `http_<status>`.
    case service(status: Int, code: String, message: String)
    /// No answer: the connection failed, timed out or was cancelled.
    case transport(URLError)
    /// An answer this client could not read: a success status with a body that is not the
    /// contract's JSON. Says what was expected, never what arrived.
    case decoding(operation: String, reason: String)
    /// The request could not be built (an encoding failure or a bad base URL).
    case invalidRequest(String)

    /// The service's error code, for `.service`.
    public var serviceCode: String? {
        if case .service(_, let code, _) = self { return code }
        return nil
    }

    /// The HTTP status, for `.service`.
    public var status: Int? {
        if case .service(let status, _, _) = self { return status }
        return nil
    }

    /// Codes of the service this client acts on.
    public enum Code {
        /// The session is invalidated or expired (409 on a challenge or a raw response).
        public static let sessionInvalidated = "session_invalidated"
        /// A different outcome was already reported for the decision (409).
        public static let outcomeConflict = "outcome_conflict"
        /// No such object in this tenant (404).
        public static let notFound = "not_found"
        /// The key is missing or not valid (401).
        public static let invalidAPIKey = "invalid_api_key"
        /// A forwarded challenge field breaks RFC 9110's grammar (400; `answerRawResponse`).
        public static let malformedChallenge = "malformed_challenge"
        /// A forwarded 401/407 carries no challenge at all (400; `answerRawResponse`).
        public static let missingChallenge = "missing_challenge"
        /// Only Digest `qop=auth-int` is offered and no request body (or hash) came (400;
        /// `answerRawResponse`): forward ``ForwardedRequest/body`` or ``ForwardedRequest/bodyHash``.
        public static let digestEntityBodyRequired = "digest_entity_body_required"
        /// A 403 was forwarded for a task Countersign released no credential to (409;
        /// `answerRawResponse`): not an authentication matter.
        public static let noReleasedCredential = "no_released_credential"
        /// Another response for the task already went on from the release this one would
        /// continue (409; `answerRawResponse`): a task's responses go one at a time.
        public static let attemptAlreadyContinued = "attempt_already_continued"
    }
}

extension CountersignClientError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .service(let status, let code, let message):
            "Countersign answered \(status) \(code): \(message)"
        case .transport(let error):
            "Countersign could not be reached: URLError \(error.code.rawValue) (\(error.localizedDescription))"
        case .decoding(let operation, let reason):
            "Countersign's answer to \(operation) could not be read: \(reason)"
        case .invalidRequest(let reason):
            "the request to Countersign could not be built: \(reason)"
        }
    }
}
