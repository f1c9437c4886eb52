public import CountersignStorage

/// What a failure or success report did.
public struct SecurityCheckReport: Sendable {
    /// The answer the report applied to, with its outcome.
    public var decision: DecisionEntry
    /// This report changed the outcome and the counts; false when it repeated an earlier one.
    public var applied: Bool
    /// The credential's counter for the check after a counted rejection.
    public var counter: DecisionStore.CounterState?
    /// The client's state for the check; `nil` when no handler counts it.
    public var state: SecurityCheckStateView?
}
