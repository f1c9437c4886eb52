import CountersignCore
import CountersignPostgres
import Hummingbird
import Logging

/// Turns every error into `{"error": {"code": ..., "message": ...}}` with its status.
///
/// Client errors are logged by code only (their message may repeat what the client sent);
/// anything unexpected is logged in full here and reaches the client as `internal_error`. A
/// database that cannot be reached is said once by the pool, when it goes and when it is back,
/// and a pool too busy to lend a connection in time at most every ten seconds: each request
/// they fail meanwhile has its access line (503) and no warning of its own, which would add
/// thousands of lines a second to an outage.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let (mapped, recognised) = CountersignError.from(error)
            if !recognised {
                context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            } else if mapped.code == .notReady {
                // A probe's answer: probes come every second, and the cause is told once by the pool.
                context.logger.debug("request failed", metadata: ["code": "\(mapped.code)", "cause": "\(error)"])
            } else if let unreachable = error as? PostgresError, [.connectionFailed, .connectionLost, .poolClosed, .poolTimeout].contains(unreachable.code) {
                context.logger.debug("request failed", metadata: ["code": "\(mapped.code)", "cause": "\(error)"])
            } else if mapped.code.kind == .unavailable || mapped.code.kind == .internalFailure {
                context.logger.warning("request failed", metadata: ["code": "\(mapped.code)", "cause": "\(error)"])
            } else {
                context.logger.debug("request refused", metadata: ["code": "\(mapped.code)"])
            }
            return JSONResponse.error(mapped)
        }
    }
}
