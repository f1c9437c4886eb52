/// Work a plan leaves to evaluators outside the core (they need OpenSSL). A plan with a pending
/// evaluation is not an answer: the caller runs the evaluation and hands the result to
/// `DecisionEngine.resolve`, which returns the final plan. Pending plans are never recorded.
public enum PendingEvaluation: Hashable, Sendable {
    /// Evaluate the server's chain for the challenge's host under `settings`; then
    /// `DecisionEngine.resolve(_:trust:)`.
    case serverTrust(settings: TrustSettings, action: RuleAction)
    /// Keep the `candidates` (in order) whose chain has an issuer among the challenge's
    /// distinguished names, all of them when there are no names or the rule named the identity
    /// (`explicit`); then `DecisionEngine.resolve(_:identities:inputs:)`.
    case identitySelection(candidates: [Credential], explicit: Bool, action: RuleAction)
}
