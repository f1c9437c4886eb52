import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Requires `Authorization: Bearer <key>` and records who the key belongs to.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    let authenticator: APIKeyAuthenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw CountersignError(.unauthenticated, "send the API key as 'Authorization: Bearer <key>'")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw CountersignError(.unauthenticated, "send the API key as 'Authorization: Bearer <key>'")
        }
        // A revoked key, or a disabled tenant's, is refused, but it is known: its access line
        // names it, so that an operator can tell whose fleet still calls with it.
        let principal = try await authenticator.authenticate(bearer: parts[1].drop(while: { $0 == " " })) { [accessLog = context.accessLog] in
            accessLog?.record($0)
        }
        var context = context
        context.principal = principal
        context.accessLog?.record(principal)
        // Setting logger metadata costs a formatting pass in the log handler even when nothing is
        // logged, so it is done only where the request's info and debug lines will be written.
        if context.logger.logLevel <= .info {
            for (name, value) in principal.logMetadata { context.logger[metadataKey: name] = value }
        }
        return try await next(request, context)
    }
}
