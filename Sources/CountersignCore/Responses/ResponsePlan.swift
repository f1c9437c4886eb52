/// What a raw response should be answered with, before the decision is recorded: the
/// challenge chosen, the engine's plan for it, and a verdict on every challenge.
public struct ResponsePlan: Sendable {
    /// A verdict on every challenge of the response, in the server's order.
    public var selection: AuthenticationChallengeSelection
    /// The protection space the answer is for: the chosen challenge's, or when none could be
    /// answered, the one whose plan answers (or the first challenge's).
    public var space: ProtectionSpace
    /// The engine's plan for `space`.
    public var plan: DecisionPlan
    public var reasonCode: ResponseReasonCode
    /// The engine's plans by protection-space key, for every challenge that reached the
    /// credential lookup.
    public var plansBySpaceKey: [String: DecisionPlan]

    /// The chosen challenge, when one is answered with a credential.
    public var chosen: AuthenticationChallengeAssessment? { selection.chosen }
}
