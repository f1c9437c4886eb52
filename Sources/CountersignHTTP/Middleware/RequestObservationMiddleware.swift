import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics

/// One access-log line and the request metrics for every request, and the request id echoed
/// in `X-Request-Id` so that a client report can be matched with the log.
///
/// It sits outside `ErrorMiddleware`, so it sees the status the client got. The route label
/// is the matched route template, never the concrete path, which would carry ids.
struct RequestObservationMiddleware<Context: RequestContext>: RouterMiddleware {
    static var requestIDField: HTTPField.Name { HTTPField.Name("X-Request-Id")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        var response = try await next(request, context)
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        let route = context.endpointPath ?? "unmatched"
        let status = response.status.code
        let dimensions = [("route", route), ("method", request.method.rawValue), ("status", String(status))]
        Counter(label: "countersign_http_requests_total", dimensions: dimensions).increment()
        Timer(label: "countersign_http_request_duration_seconds", dimensions: dimensions).recordNanoseconds(Int64(elapsed))
        response.headers[Self.requestIDField] = context.id
        let level: Logger.Level = status >= 500 ? .warning : .info
        context.logger.log(
            level: level,
            "request",
            metadata: [
                "method": .string(request.method.rawValue),
                "route": .string(route),
                "status": .stringConvertible(status),
                "duration_ms": .string(String(format: "%.3f", Double(elapsed) / 1_000_000)),
            ]
        )
        return response
    }
}
