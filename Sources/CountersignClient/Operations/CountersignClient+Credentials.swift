public import Foundation

extension CountersignClient {
    /// `submitCredential`: hands the service a credential the client obtained itself (a user
    /// typed it), to keep at the asked persistence if the tenant's policy allows it.
    public func submitCredential(_ submission: SubmitCredentialRequest, in sessionID: UUID) async throws(CountersignClientError) -> Submission {
        try await send(
            APIRequest(
                operation: "submitCredential",
                method: "POST",
                path: "v1/sessions/\(sessionID.uuidString.lowercased())/credentials",
                json: submission,
                safety: .unsafe,
                success: [200, 201]
            )
        )
    }
}
