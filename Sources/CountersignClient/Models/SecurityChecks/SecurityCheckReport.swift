/// The service's answer to a security-check failure or success report.
public struct SecurityCheckReport: Codable, Hashable, Sendable {
    /// The answer the report applied to, with its outcome.
    public var decision: DecisionRecord
    /// The report changed the outcome and the counts (false when it repeated an earlier one).
    public var applied: Bool
    /// The credential's counter for the check, after a counted rejection.
    public var counter: OutcomeResponse.Counter?
    /// The client's state for the check; nil when no handler counts it.
    public var state: SecurityCheckState?

    enum CodingKeys: String, CodingKey {
        case decision, applied, counter, state
    }

    public func encode(to encoder: any Encoder) throws {
        // Every member is present in the contract, null when empty.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(decision, forKey: .decision)
        try container.encode(applied, forKey: .applied)
        try container.encode(counter, forKey: .counter)
        try container.encode(state, forKey: .state)
    }
}
