public import Foundation

extension CountersignClient {
    /// `reportOutcome`: tells the service what the upstream server did with a decision's
    /// credential. The service counts the same report once, so this call is retried like a GET,
    /// by `retry` when given (else the client's policy).
    @discardableResult
    public func reportOutcome(_ report: OutcomeReport, for decisionID: UUID, retry: RetryPolicy? = nil) async throws(CountersignClientError) -> OutcomeResponse {
        try await send(
            APIRequest(
                operation: "reportOutcome",
                method: "POST",
                path: "v1/decisions/\(decisionID.uuidString.lowercased())/outcome",
                json: report,
                safety: .idempotent
            ),
            retry: retry
        )
    }
}
