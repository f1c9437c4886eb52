import CountersignCore
import HTTPTypes
import Hummingbird

/// Answers a request whose path names a route but whose method none of that route's handlers
/// takes with 405 `method_not_allowed` and an `Allow` header (RFC 9110 §15.5.6), where the
/// router alone would say 404 as if the path did not exist.
///
/// It must be added to the router after every route: the router builds its not-found responder
/// from all of its middleware when the application starts, but wraps each route only in the
/// middleware added before it, so this one sees exactly the requests no route took.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    private struct Route {
        var template: String
        var components: [RouterPath.Element]
        var methods: Set<HTTPRequest.Method>

        /// How many of the path's segments this route names literally: the router prefers a
        /// literal segment to a capture, so only the most literal matches speak for the path.
        func literalMatches(_ segments: [Substring]) -> Int? {
            guard components.count == segments.count else { return nil }
            var literal = 0
            for (component, segment) in zip(components, segments) {
                guard component ~= segment else { return nil }
                if component == segment { literal += 1 }
            }
            return literal
        }
    }

    private let routes: [Route]

    init(routes: [Router<Context>.RouteDescription]) {
        var byPath: [String: Route] = [:]
        for route in routes {
            var methods: Set = [route.method]
            // The router adds HEAD to each GET route when it builds its responder, after this list was taken.
            if route.method == .get { methods.insert(.head) }
            let template = route.path.description
            byPath[template, default: Route(template: template, components: route.path.components, methods: [])].methods.formUnion(methods)
        }
        self.routes = Array(byPath.values)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let (allowed, template) = route(for: request.uri.path) else { throw error }
            // The route's template, not the router's "NotFound", labels its metrics and access log.
            context.coreContext.endpointPath.value = template
            var response = JSONResponse.error(
                CountersignError(.methodNotAllowed, "\(request.method.rawValue) is not allowed here; this route takes \(allowed)")
            )
            response.headers[.allow] = allowed
            return response
        }
    }

    /// The methods of the route the path names, as an `Allow` value, and the route's template;
    /// `nil` when no route names it.
    func route(for path: String) -> (allowed: String, template: String)? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var best: (literal: Int, methods: Set<HTTPRequest.Method>, template: String)?
        for route in routes {
            guard let literal = route.literalMatches(segments) else { continue }
            if literal > best?.literal ?? -1 {
                best = (literal, route.methods, route.template)
            } else if literal == best?.literal {
                best?.methods.formUnion(route.methods)
            }
        }
        return best.map { ($0.methods.map(\.rawValue).sorted().joined(separator: ", "), $0.template) }
    }
}
