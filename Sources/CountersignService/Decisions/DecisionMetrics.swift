import CountersignCore
import Metrics
import Synchronization

/// `countersign_decisions_total` by disposition and source, each counter made once.
final class DecisionMetrics: Sendable {
    static let shared = DecisionMetrics()

    private struct Key: Hashable {
        var disposition: Disposition
        var source: DecisionSource
    }

    private let counters = Mutex<[Key: Counter]>([:])

    func decided(_ plan: DecisionPlan) {
        let key = Key(disposition: plan.disposition, source: plan.source)
        let counter = counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(
                label: "countersign_decisions_total",
                dimensions: [("disposition", plan.disposition.rawValue), ("source", plan.source.rawValue)]
            )
            counters[key] = counter
            return counter
        }
        counter.increment()
    }
}
