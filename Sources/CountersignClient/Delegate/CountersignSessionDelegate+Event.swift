public import Foundation

extension CountersignSessionDelegate {
    /// Something the delegate did, for ``Configuration/onEvent``. Never carries a secret.
    public enum Event: Sendable {
        /// The Countersign session was opened (lazily, at the first challenge).
        case sessionOpened(CountersignSession)
        /// A challenge was answered with the service's decision.
        case decided(DecisionSummary)
        /// A challenge was answered without it.
        case fellBack(FallbackSummary)
        /// A task ended; its decisions and the outcomes about to be reported.
        case taskCompleted(TaskSummary)
        /// An outcome was reported; `counted`: it counted a rejection.
        case outcomeReported(decisionId: UUID, report: OutcomeReport, counted: Bool)
        /// An outcome could not be reported.
        case outcomeReportFailed(decisionId: UUID, report: OutcomeReport, error: CountersignClientError)
        /// The Countersign session was invalidated after the URLSession was.
        case sessionInvalidated(CountersignSession)
        /// It could not be; it ends by its expiry.
        case sessionInvalidationFailed(CountersignClientError)
    }

    /// A task's end as the delegate saw it.
    public struct TaskSummary: Sendable {
        public var taskIdentifier: Int
        /// The final HTTP status, if a response arrived.
        public var status: Int?
        /// The error the task ended with.
        public var error: (any Error)?
        /// The decisions applied to it, in order.
        public var decisions: [DecisionSummary]
        /// The challenges answered without a decision.
        public var fallbacks: [FallbackSummary]
        /// The outcomes its decisions get (reported when ``Configuration/reportsOutcomes``).
        public var outcomes: [PendingOutcome]
    }
}
