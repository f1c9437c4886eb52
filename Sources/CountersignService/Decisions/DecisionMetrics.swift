import CountersignCore
import Metrics

/// `countersign_decisions_total` by disposition and source, and
/// `countersign_security_check_answers_total` by action: every series made at start, at 0, so
/// that a rate or an alert on one exists before its first event.
final class DecisionMetrics: Sendable {
    static let shared = DecisionMetrics()

    private struct Key: Hashable {
        var disposition: Disposition
        var source: DecisionSource
    }

    private let decisions: [Key: Counter]
    private let securityCheckAnswers: [SecurityCheckAnswerAction: Counter]

    private init() {
        var decisions: [Key: Counter] = [:]
        for disposition in Disposition.allCases {
            for source in DecisionSource.allCases {
                decisions[Key(disposition: disposition, source: source)] = Counter(
                    label: "countersign_decisions_total",
                    dimensions: [("disposition", disposition.rawValue), ("source", source.rawValue)]
                )
            }
        }
        self.decisions = decisions
        securityCheckAnswers = Dictionary(
            uniqueKeysWithValues: SecurityCheckAnswerAction.allCases.map {
                ($0, Counter(label: "countersign_security_check_answers_total", dimensions: [("action", $0.rawValue)]))
            }
        )
    }

    func decided(_ plan: DecisionPlan) {
        decisions[Key(disposition: plan.disposition, source: plan.source)]?.increment()
    }

    func answered(_ action: SecurityCheckAnswerAction) {
        securityCheckAnswers[action]?.increment()
    }
}
