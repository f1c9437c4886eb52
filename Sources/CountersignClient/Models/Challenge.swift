/// An authentication challenge forwarded to the service (`POST /v1/sessions/{id}/challenges`),
/// the `Challenge` schema of the contract.
public struct Challenge: Codable, Hashable, Sendable {
    /// The client's name for the request that met the challenge, unique within the session.
    public var taskId: String
    public var protectionSpace: ProtectionSpace
    /// What the client would have used: the user, and whether it had a password. Never a password.
    public var proposedCredential: ProposedCredential?
    /// How many times this task already failed to authenticate here.
    public var previousFailureCount: Int
    /// The response that carried the challenge.
    public var failureResponse: FailureResponse?
    /// The error the client's stack attached to the challenge.
    public var error: ChallengeError?

    public init(
        taskId: String,
        protectionSpace: ProtectionSpace,
        proposedCredential: ProposedCredential? = nil,
        previousFailureCount: Int = 0,
        failureResponse: FailureResponse? = nil,
        error: ChallengeError? = nil
    ) {
        self.taskId = taskId
        self.protectionSpace = protectionSpace
        self.proposedCredential = proposedCredential
        self.previousFailureCount = previousFailureCount
        self.failureResponse = failureResponse
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case taskId, protectionSpace, proposedCredential, previousFailureCount, failureResponse, error
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        taskId = try container.decode(String.self, forKey: .taskId)
        protectionSpace = try container.decode(ProtectionSpace.self, forKey: .protectionSpace)
        proposedCredential = try container.decodeIfPresent(ProposedCredential.self, forKey: .proposedCredential)
        previousFailureCount = try container.decodeIfPresent(Int.self, forKey: .previousFailureCount) ?? 0
        failureResponse = try container.decodeIfPresent(FailureResponse.self, forKey: .failureResponse)
        error = try container.decodeIfPresent(ChallengeError.self, forKey: .error)
    }
}
