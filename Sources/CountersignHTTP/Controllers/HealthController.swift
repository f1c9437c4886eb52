import CountersignCore
import CountersignPostgres
import CountersignStorage
import Hummingbird
import Logging
import Prometheus

/// The unauthenticated probes: liveness, readiness and Prometheus metrics.
struct HealthController: Sendable {
    let readiness: Readiness
    let metrics: PrometheusCollectorRegistry

    func addRoutes(to router: Router<AppRequestContext>) {
        // Queries are ignored here, unlike on the API's routes (UndeclaredQueryMiddleware):
        // monitoring systems add cache-busting parameters, and a probe that failed on one would
        // take a healthy instance out of rotation.
        router.get("/healthz") { _, _ in
            try JSONResponse.make(["status": "ok"])
        }
        router.get("/readyz") { _, _ in
            try await readiness.check()
            return try JSONResponse.make(["status": "ready"])
        }
        router.get("/metrics") { _, _ in
            var bytes: [UInt8] = []
            metrics.emit(into: &bytes)
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: .init(bytes: MetricHelp.adding(to: bytes)))
            )
        }
    }
}
