import Hummingbird

/// Answers a path with an empty segment (`/v1/policy/`, `//v1/policy`) 404 `route_not_found`:
/// the router skips empty segments and would serve it as the route without them, so that a
/// `POST /v1/keys/` created a key though the contract names no such path.
struct CanonicalPathMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path.utf8
        guard path.count > 1 else { return try await next(request, context) }
        var previous: UInt8 = 0
        for byte in path {
            if byte == UInt8(ascii: "/"), previous == UInt8(ascii: "/") { throw HTTPError(.notFound) }
            previous = byte
        }
        guard previous != UInt8(ascii: "/") else { throw HTTPError(.notFound) }
        return try await next(request, context)
    }
}
