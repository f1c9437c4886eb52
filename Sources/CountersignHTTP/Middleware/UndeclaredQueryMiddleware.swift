import CountersignCore
import Hummingbird

/// Refuses a query on a route that takes none: 400 `invalid_query`, as for any parameter a
/// route does not declare. The routes that take one check it themselves (`QueryParameters`).
///
/// A group middleware, so it runs once the route is known.
struct UndeclaredQueryMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The routes that read a query, as `METHOD /template`.
    static var routesTakingQueries: Set<String> {
        [
            "GET /v1/tenants", "GET /v1/keys", "GET /v1/credentials", "GET /v1/credentials/{credentialId}/history",
            "GET /v1/identities", "GET /v1/counters", "GET /v1/decisions", "GET /v1/security-checks/states",
            "POST /v1/sessions/{sessionId}/security-checks/{securityCheck}/success",
            "POST /v1/sessions/{sessionId}/security-checks/{securityCheck}/failure",
        ]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.query != nil {
            // HEAD is answered by the GET route.
            let method = request.method == .head ? "GET" : request.method.rawValue
            if !Self.routesTakingQueries.contains("\(method) \(context.endpointPath ?? "")") {
                _ = try QueryParameters(request, accepting: [])
            }
        }
        return try await next(request, context)
    }
}
