public import Foundation

extension CountersignClient {
    /// `decideChallenge`: forwards a challenge and returns the service's decision.
    ///
    /// Never resent blindly: only when the connection could not be made at all, or on 503
    /// (nothing was recorded). A challenge whose answer was lost is not asked again by this call.
    public func decideChallenge(_ challenge: Challenge, in sessionID: UUID) async throws(CountersignClientError) -> DecisionAnswer {
        try await send(
            APIRequest(
                operation: "decideChallenge",
                method: "POST",
                path: "v1/sessions/\(sessionID.uuidString.lowercased())/challenges",
                json: challenge,
                safety: .unsafe
            )
        )
    }
}
