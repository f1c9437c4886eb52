import CountersignCore
import CountersignService
import CountersignStorage
import Foundation
import Hummingbird
import Logging

/// The client API: sessions, the challenges forwarded in them, and submitted credentials.
struct SessionController: Sendable {
    let sessions: SessionService
    let decisions: DecisionService
    let body: JSONBody

    struct OpenSession: Codable {
        var clientId: String
        var label: String?
        var ttlSeconds: Int?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            clientId = try container.decode(String.self, forKey: .clientId)
            label = try container.decodeIfPresent(String.self, forKey: .label)
            do {
                ttlSeconds = try container.decodeIfPresent(Int.self, forKey: .ttlSeconds)
            } catch DecodingError.dataCorrupted {
                // A whole number too large for any TTL is out of range like any other.
                throw CountersignError(.invalidTTL, "'ttlSeconds' must be between 1 and this tenant's maximum")
            }
        }
    }

    struct Invalidate: Codable {
        var mode: InvalidationMode
    }

    struct SubmitCredential: Codable {
        var protectionSpace: ProtectionSpace
        var user: String
        var password: String
        var domain: String?
        var persistence: Persistence
    }

    func addRoutes(to group: RouterGroup<ClientRequestContext>) {
        group.post { request, context in
            let input = try await body.decode(OpenSession.self, from: request)
            if let bound = context.key.clientID, !ClientIdentifier.same(input.clientId, bound) {
                throw CountersignError(.clientIDNotAllowed, "this key serves the client '\(bound)' only")
            }
            let session = try await sessions.open(
                tenantID: context.tenantID,
                keyID: context.key.id,
                clientID: input.clientId,
                label: input.label,
                ttlSeconds: input.ttlSeconds
            )
            return try JSONResponse.make(session, status: .created)
        }
        group.get(":sessionId") { _, context in
            try JSONResponse.make(try await sessions.get(tenantID: context.tenantID, id: try context.parameters.uuid("sessionId")))
        }
        group.post(":sessionId/invalidate") { request, context in
            let input = try await body.decode(Invalidate.self, from: request)
            let session = try await sessions.invalidate(tenantID: context.tenantID, id: try context.parameters.uuid("sessionId"), mode: input.mode)
            return try JSONResponse.make(session)
        }
        group.post(":sessionId/challenges") { request, context in
            let sessionID = try context.parameters.uuid("sessionId")
            let challenge = try await body.decode(Challenge.self, from: request)
            let answer = try await decisions.decide(
                challenge,
                for: .init(tenantID: context.tenantID, sessionID: sessionID, keyID: context.key.id)
            )
            return try JSONResponse.make(answer)
        }
        group.post(":sessionId/credentials") { request, context in
            let sessionID = try context.parameters.uuid("sessionId")
            let input = try await body.decode(SubmitCredential.self, from: request)
            let submission = try await sessions.submit(
                tenantID: context.tenantID,
                keyID: context.key.id,
                sessionID: sessionID,
                space: input.protectionSpace,
                user: input.user,
                password: input.password,
                domain: input.domain,
                persistence: input.persistence
            )
            return try JSONResponse.make(submission, status: submission.created ? .created : .ok)
        }
    }
}

// The submitted password must never reach a log line through string interpolation, nor a mirror.
extension SessionController.SubmitCredential: CustomStringConvertible, CustomReflectable {
    var description: String { "SubmitCredential(user: \(user), persistence: \(persistence.rawValue), password: redacted)" }
    var customMirror: Mirror { Mirror(self, children: ["user": user, "persistence": persistence.rawValue, "password": "redacted"], displayStyle: .struct) }
}
