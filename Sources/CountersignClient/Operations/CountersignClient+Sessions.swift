public import Foundation

extension CountersignClient {
    /// `openSession`: opens a session, the service-side twin of one URLSession.
    ///
    /// Retried only when the request certainly did not arrive (a repeat would open a second
    /// session).
    public func openSession(_ request: OpenSessionRequest) async throws(CountersignClientError) -> CountersignSession {
        try await send(
            APIRequest(operation: "openSession", method: "POST", path: "v1/sessions", json: request, safety: .unsafe, success: [201])
        )
    }

    /// `getSession`: a session's state; an expired session reads as invalidated (`expired`).
    public func getSession(_ id: UUID) async throws(CountersignClientError) -> CountersignSession {
        try await send(APIRequest(operation: "getSession", method: "GET", path: "v1/sessions/\(id.uuidString.lowercased())", safety: .idempotent))
    }

    /// `invalidateSession`: ends a session as `finishTasksAndInvalidate()` (`.finishTasks`) or
    /// `invalidateAndCancel()` (`.cancel`) end a URLSession. Idempotent.
    @discardableResult
    public func invalidateSession(_ id: UUID, mode: InvalidationMode) async throws(CountersignClientError) -> CountersignSession {
        struct Body: Encodable { var mode: InvalidationMode }
        return try await send(
            APIRequest(
                operation: "invalidateSession",
                method: "POST",
                path: "v1/sessions/\(id.uuidString.lowercased())/invalidate",
                json: Body(mode: mode),
                safety: .idempotent
            )
        )
    }
}
