public import Foundation

/// An outcome the delegate reports for a decision when the decision's task ends.
public struct PendingOutcome: Sendable, Hashable {
    public var decisionId: UUID
    public var report: OutcomeReport

    public init(decisionId: UUID, report: OutcomeReport) {
        self.decisionId = decisionId
        self.report = report
    }
}
