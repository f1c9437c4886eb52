import CoreMetrics
import Metrics
import Prometheus

/// The process's metrics registry. swift-metrics takes one backend per process, so the first
/// application built bootstraps it and every later one (tests build many) shares it.
enum Observability {
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Libraries name metrics with dots (`http.server.active_requests`); Prometheus wants
        // underscores.
        factory.nameAndLabelSanitizer = { name, labels in
            (sanitize(name), labels.map { (sanitize($0.0), $0.1) })
        }
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(2.5), .seconds(5),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    private static func sanitize(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }
}
