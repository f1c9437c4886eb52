import Hummingbird

/// Answers a path with an empty segment (`/v1/policy/`, `//v1/policy`) 404 `route_not_found`:
/// the router skips empty segments and would serve it as the route without them, so that a
/// `POST /v1/keys/` created a key though the contract names no such path.
/// Its metrics and access line say `unmatched`, as for any path no route takes, not the route
/// the router found.
struct CanonicalPathMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.hasEmptySegment(request.uri.path) else { return try await next(request, context) }
        context.coreContext.endpointPath.value = nil
        throw HTTPError(.notFound)
    }

    static func hasEmptySegment(_ path: String) -> Bool {
        let bytes = path.utf8
        guard bytes.count > 1 else { return false }
        var previous: UInt8 = 0
        for byte in bytes {
            if byte == UInt8(ascii: "/"), previous == UInt8(ascii: "/") { return true }
            previous = byte
        }
        return previous == UInt8(ascii: "/")
    }
}
