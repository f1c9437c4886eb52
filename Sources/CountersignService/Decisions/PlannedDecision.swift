public import CountersignCore

/// What a planner hands to ``DecisionService/decideAndRecord(taskID:kind:previousFailureCount:for:plan:prepare:)``:
/// the protection space decided about and the engine's plan for it, with whatever else the
/// planner worked out on the side.
public protocol PlannedDecision: Sendable {
    /// The space the decision is recorded for.
    var space: ProtectionSpace { get }
    /// The plan to record and answer.
    var plan: DecisionPlan { get }
}

extension ResponsePlan: PlannedDecision {}

/// The plan for a forwarded challenge.
struct ChallengePlan: PlannedDecision {
    let space: ProtectionSpace
    let plan: DecisionPlan
}
