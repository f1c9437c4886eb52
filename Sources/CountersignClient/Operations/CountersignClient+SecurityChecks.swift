public import Foundation

extension CountersignClient {
    /// `answerSecurityChecks`: forwards a MobileFirst-style challenge list as the server sent it;
    /// returns one answer per check (`submitChallengeAnswer` with the answer object, `cancel`, or
    /// `unhandled`).
    ///
    /// Not resent blindly: each call records decisions and moves the client's attempt states.
    public func answerSecurityChecks(_ list: SecurityCheckChallengeList, in sessionID: UUID) async throws(CountersignClientError) -> SecurityCheckAnswers {
        try await send(
            APIRequest(
                operation: "answerSecurityChecks",
                method: "POST",
                path: "v1/sessions/\(sessionID.uuidString.lowercased())/security-checks",
                json: list,
                safety: .unsafe
            )
        )
    }

    /// `reportSecurityCheckFailure`: the failure payload the server sent for `securityCheck`
    /// (MobileFirst's `handleFailure`), as the rejection of `decisionId` (default: the last answer
    /// given for the check in this session).
    ///
    /// With a `decisionId` the report is idempotent and retried like a GET; without one it names
    /// "the last answer", which a retry could no longer mean, so it is retried only when it did
    /// not arrive.
    public func reportSecurityCheckFailure(
        _ securityCheck: String,
        payload: [String: JSONValue] = [:],
        decisionId: UUID? = nil,
        in sessionID: UUID
    ) async throws(CountersignClientError) -> SecurityCheckReport {
        try await reportSecurityCheck(securityCheck, "failure", payload: payload, decisionId: decisionId, in: sessionID)
    }

    /// `reportSecurityCheckSuccess`: the success payload the server sent for `securityCheck`
    /// (MobileFirst's `handleSuccess`), accepting `decisionId` (default: the last answer given for
    /// the check in this session). Retried as ``reportSecurityCheckFailure(_:payload:decisionId:in:)``.
    public func reportSecurityCheckSuccess(
        _ securityCheck: String,
        payload: [String: JSONValue] = [:],
        decisionId: UUID? = nil,
        in sessionID: UUID
    ) async throws(CountersignClientError) -> SecurityCheckReport {
        try await reportSecurityCheck(securityCheck, "success", payload: payload, decisionId: decisionId, in: sessionID)
    }

    private func reportSecurityCheck(
        _ securityCheck: String,
        _ kind: String,
        payload: [String: JSONValue],
        decisionId: UUID?,
        in sessionID: UUID
    ) async throws(CountersignClientError) -> SecurityCheckReport {
        // The contract's names; and never `.` or `..`, which URL handling would fold into the path.
        guard securityCheck.range(of: "^[A-Za-z0-9._-]{1,100}$", options: .regularExpression) != nil, securityCheck != ".", securityCheck != ".." else {
            throw .invalidRequest("'\(securityCheck)' is not a security-check name")
        }
        var request = try APIRequest<SecurityCheckReport>(
            operation: kind == "failure" ? "reportSecurityCheckFailure" : "reportSecurityCheckSuccess",
            method: "POST",
            path: "v1/sessions/\(sessionID.uuidString.lowercased())/security-checks/\(securityCheck)/\(kind)",
            json: payload,
            safety: decisionId == nil ? .unsafe : .idempotent
        )
        if let decisionId { request.query = [URLQueryItem(name: "decisionId", value: decisionId.uuidString.lowercased())] }
        return try await send(request)
    }
}
