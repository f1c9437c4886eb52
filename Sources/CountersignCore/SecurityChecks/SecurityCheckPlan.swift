/// How one check is answered, before it is recorded.
public struct SecurityCheckPlan: Hashable, Sendable {
    public var action: SecurityCheckAnswerAction
    /// The decision to record; with `submitChallengeAnswer` it names the credential.
    public var decision: DecisionPlan
    /// Answers the client may still try, by the smaller of the server's and the central count.
    public var remainingAttempts: Int?
    /// The client's state for the check.
    public var state: SecurityCheckState.Name?
    /// The answer object to fill (`submitChallengeAnswer`).
    public var template: SecurityCheckAnswerTemplate?

    public init(
        action: SecurityCheckAnswerAction,
        decision: DecisionPlan,
        remainingAttempts: Int? = nil,
        state: SecurityCheckState.Name? = nil,
        template: SecurityCheckAnswerTemplate? = nil
    ) {
        self.action = action
        self.decision = decision
        self.remainingAttempts = remainingAttempts
        self.state = state
        self.template = template
    }
}
