/// An authentication challenge as a fleet client forwards it (`URLAuthenticationChallenge`).
public struct Challenge: Codable, Hashable, Sendable {
    /// The client's name for the request that met the challenge.
    public var taskId: String
    public var protectionSpace: ProtectionSpace
    /// What the client would have used; never carries a password, only whether it had one.
    public var proposedCredential: ProposedCredential?
    /// How many times this task already failed to authenticate here.
    public var previousFailureCount: Int?
    /// The response that carried the challenge.
    public var failureResponse: FailureResponse?
    public var error: ChallengeError?

    public init(
        taskId: String,
        protectionSpace: ProtectionSpace,
        proposedCredential: ProposedCredential? = nil,
        previousFailureCount: Int? = nil,
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

    public var failureCount: Int { previousFailureCount ?? 0 }

    public func validate() throws {
        try Validation.name(taskId, field: "taskId")
        try protectionSpace.validate()
        try Validation.range(failureCount, 0...1_000_000, field: "previousFailureCount")
        if let user = proposedCredential?.user { try Validation.text(user, field: "proposedCredential.user", maxLength: 1000) }
        if let failureResponse {
            try Validation.range(failureResponse.status, 100...599, field: "failureResponse.status")
            guard (failureResponse.headers?.count ?? 0) <= 200 else {
                throw CountersignError(.invalidField, "'failureResponse.headers' has too many entries")
            }
        }
    }
}

/// The credential the client proposes: who, and whether it had a password (never the password).
public struct ProposedCredential: Codable, Hashable, Sendable {
    public var user: String?
    public var hasPassword: Bool?

    public init(user: String?, hasPassword: Bool? = nil) {
        self.user = user
        self.hasPassword = hasPassword
    }
}

/// Status and headers of the response that carried a challenge.
public struct FailureResponse: Codable, Hashable, Sendable {
    public var status: Int
    public var headers: [String: String]?

    public init(status: Int, headers: [String: String]? = nil) {
        self.status = status
        self.headers = headers
    }
}

/// The error the client's stack attached to the challenge, if any.
public struct ChallengeError: Codable, Hashable, Sendable {
    public var domain: String?
    public var code: Int?
    public var message: String?
}
