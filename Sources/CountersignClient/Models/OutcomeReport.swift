/// The body of `POST /v1/decisions/{id}/outcome`.
public struct OutcomeReport: Codable, Hashable, Sendable {
    public var outcome: Outcome
    /// The status the upstream server answered (100...599).
    public var upstreamStatus: Int?

    public init(outcome: Outcome, upstreamStatus: Int? = nil) {
        self.outcome = outcome
        self.upstreamStatus = upstreamStatus
    }
}
