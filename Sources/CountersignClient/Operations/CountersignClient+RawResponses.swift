public import Foundation

extension CountersignClient {
    /// `answerRawResponse`: forwards a raw 401, 407 or 403 as the upstream server sent it and
    /// returns the service's decision, with the ready `Authorization` (or `Proxy-Authorization`)
    /// header for `useCredential`.
    ///
    /// ```swift
    /// let answer = try await client.answerRawResponse(
    ///     RawResponse(taskId: "task-42", response: http401, request: request), in: session.id)
    /// if let header = answer.authorization { header.apply(to: &request) }  // then send it again
    /// ```
    ///
    /// Forward every later 401/407 (or a 403) of the same request with the same `taskId`: a second
    /// 401 after the header counts as its rejection. A successful retry is reported with
    /// ``reportOutcome(_:for:)`` (`accepted`), which resets the rejection count.
    ///
    /// Never resent blindly, like a challenge: only when the connection could not be made at all,
    /// or on 503 (nothing was recorded). After a timeout or a lost connection the first copy may
    /// have been decided, recorded and counted (a rejection, a Digest nonce count), so the call
    /// fails with `.transport` instead.
    ///
    /// Errors the service may answer (``CountersignClientError/serviceCode``): 400 with the
    /// parser's codes for a broken challenge (`malformed_challenge`, `missing_challenge`, ...), 404
    /// `not_found`, 409 `session_invalidated`, `no_released_credential` (a 403 after no
    /// credential) or `attempt_already_continued` (a copy of a response already answered), 503. A status other than 401, 403 or 407, or a 407 without ``RawResponse/proxy``,
    /// fails with `.invalidRequest` before anything is sent.
    public func answerRawResponse(_ response: RawResponse, in sessionID: UUID) async throws(CountersignClientError) -> ResponseAnswer {
        guard RawResponse.forwardableStatuses.contains(response.status) else {
            throw .invalidRequest("answerRawResponse takes a 401, 403 or 407, not \(response.status)")
        }
        guard response.status != 407 || response.proxy != nil else {
            throw .invalidRequest("a 407 needs the proxy that answered it")
        }
        return try await send(
            APIRequest(
                operation: "answerRawResponse",
                method: "POST",
                path: "v1/sessions/\(sessionID.uuidString.lowercased())/responses",
                json: response,
                safety: .unsafe
            )
        )
    }
}
