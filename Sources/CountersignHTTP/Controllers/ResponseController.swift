import CountersignCore
import CountersignService
import Hummingbird

/// Raw 401/407/403 responses forwarded by clients that do not parse challenges themselves.
struct ResponseController: Sendable {
    let responses: RawResponseService
    let body: JSONBody

    func addRoutes(to group: RouterGroup<ClientRequestContext>) {
        group.post(":sessionId/responses") { request, context in
            let sessionID = try context.parameters.uuid("sessionId")
            let response = try await body.decode(RawResponse.self, from: request)
            let answer = try await responses.answer(response, for: .init(tenantID: context.tenantID, sessionID: sessionID, keyID: context.key.id))
            return try JSONResponse.make(answer)
        }
    }
}
