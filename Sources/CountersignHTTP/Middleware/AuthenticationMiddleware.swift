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
        let principal = try await authenticator.authenticate(bearer: parts[1].drop(while: { $0 == " " }))
        var context = context
        context.principal = principal
        // Setting logger metadata costs a formatting pass in the log handler even when nothing is
        // logged, so it is done only where the request's info and debug lines will be written.
        let logsInfo = context.logger.logLevel <= .info
        if logsInfo || context.accessLog != nil {
            let who: Logger.Metadata = switch principal {
            case .operator: ["principal": "operator"]
            case .tenantKey(let key): ["tenant": .string(key.tenantID.text), "key": .string(key.prefix)]
            }
            if logsInfo {
                for (name, value) in who { context.logger[metadataKey: name] = value }
            }
            context.accessLog?.record(who)
        }
        return try await next(request, context)
    }
}
