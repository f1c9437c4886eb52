import CountersignCore
import Hummingbird
import Logging

/// Turns every error into `{"error": {"code": ..., "message": ...}}` with its status.
///
/// Client errors are logged by code only (their message may repeat what the client sent);
/// anything unexpected is logged in full here and reaches the client as `internal_error`.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let (mapped, recognised) = CountersignError.from(error)
            if !recognised {
                context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            } else if mapped.code.kind == .unavailable || mapped.code.kind == .internalFailure {
                context.logger.warning("request failed", metadata: ["code": "\(mapped.code)", "cause": "\(error)"])
            } else {
                context.logger.debug("request refused", metadata: ["code": "\(mapped.code)"])
            }
            return JSONResponse.error(mapped)
        }
    }
}
