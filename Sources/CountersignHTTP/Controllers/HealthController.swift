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
        // The probes take no query either (UndeclaredQueryMiddleware, for the API's routes).
        router.get("/healthz") { request, _ in
            _ = try QueryParameters(request.uri.queryParameters, accepting: [])
            return try JSONResponse.make(["status": "ok"])
        }
        router.get("/readyz") { request, context in
            _ = try QueryParameters(request.uri.queryParameters, accepting: [])
            try await readiness.check()
            return try JSONResponse.make(["status": "ready"])
        }
        router.get("/metrics") { request, _ in
            _ = try QueryParameters(request.uri.queryParameters, accepting: [])
            var bytes: [UInt8] = []
            metrics.emit(into: &bytes)
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: .init(bytes: bytes))
            )
        }
    }
}
