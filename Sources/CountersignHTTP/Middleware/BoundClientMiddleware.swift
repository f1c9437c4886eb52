import CountersignCore
import CountersignService
import CountersignStorage
import Hummingbird

/// Keeps a client key bound to one `clientId` (`APIKey.clientID`) to that client's sessions and
/// decisions: another client's are 404, as another tenant's are, so that a device's key neither
/// answers nor reads another device's session. A key a fleet shares passes untouched.
///
/// A group middleware, so it runs once the route, and its parameters, are known.
struct BoundClientMiddleware: RouterMiddleware {
    typealias Context = ClientRequestContext

    let cache: DecisionStateCache
    let decisions: DecisionStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let bound = context.key.clientID else { return try await next(request, context) }
        // An id that does not parse is the route's own 400.
        if let sessionID = try? context.parameters.uuid("sessionId") {
            // Unknown here or another client's: one answer, which tells nothing of the other.
            guard ClientIdentifier.same(try await cache.session(sessionID, tenantID: context.tenantID).session.clientId, bound) else {
                throw CountersignError(.notFound, "no such session")
            }
        }
        if let decisionID = try? context.parameters.uuid("decisionId") {
            guard let decision = try await decisions.get(tenantID: context.tenantID, id: decisionID), ClientIdentifier.same(decision.clientId, bound) else {
                throw CountersignError(.notFound, "no such decision")
            }
        }
        return try await next(request, context)
    }
}
