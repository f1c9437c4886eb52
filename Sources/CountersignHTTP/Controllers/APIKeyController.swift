import CountersignCore
import CountersignStorage
import Foundation
import Hummingbird
import Logging

/// A tenant admin's API for the tenant's keys.
struct APIKeyController: Sendable {
    let keys: APIKeyStore
    let authenticator: APIKeyAuthenticator
    let body: JSONBody

    struct CreateKey: Codable {
        var name: String
        var role: APIKeyRole
        var clientId: String?
    }

    func addRoutes(to group: RouterGroup<AdminRequestContext>) {
        group.post { request, context in
            let input = try await body.decode(CreateKey.self, from: request)
            let name = try Validation.name(input.name, field: "name")
            if let clientID = input.clientId {
                guard input.role == .client else { throw CountersignError(.invalidField, "'clientId' binds client keys only; an \(input.role.rawValue) key has none") }
                try Validation.name(clientID, field: "clientId")
            }
            guard
                let created = try await keys.create(
                    tenantID: context.tenantID, name: name, role: input.role, clientID: input.clientId, createdBy: .key(context.key.id)
                )
            else {
                throw CountersignError(.notFound, "no such tenant")
            }
            context.logger.notice("key created", metadata: ["created": "\(created.key.prefix)", "role": "\(input.role.rawValue)"])
            return try JSONResponse.make(CreatedKey(created), status: .created)
        }
        group.get { request, context in
            let page = try QueryParameters(request, accepting: QueryParameters.paging).page()
            return try JSONResponse.make(ListPage("keys", try await keys.list(tenantID: context.tenantID, limit: page.limit, after: page.cursor)))
        }
        group.get(":keyId") { _, context in
            guard let key = try await keys.get(tenantID: context.tenantID, id: try context.parameters.uuid("keyId")) else {
                throw CountersignError(.notFound, "no such key")
            }
            return try JSONResponse.make(key)
        }
        group.delete(":keyId") { _, context in
            guard let key = try await keys.revoke(tenantID: context.tenantID, id: try context.parameters.uuid("keyId")) else {
                throw CountersignError(.notFound, "no such key")
            }
            authenticator.forget(keyID: key.id)
            context.logger.notice("key revoked", metadata: ["revoked": "\(key.prefix)"])
            return try JSONResponse.make(key)
        }
    }
}
