import CountersignCore
import CountersignStorage
import Foundation
import Hummingbird
import Logging

/// The operator's API: tenants and each tenant's first admin key.
struct TenantController: Sendable {
    let tenants: TenantStore
    let keys: APIKeyStore
    let authenticator: APIKeyAuthenticator
    let body: JSONBody

    struct CreateTenant: Codable {
        var name: String
    }

    struct CreateAdminKey: Codable {
        var name: String
    }

    func addRoutes(to group: RouterGroup<OperatorRequestContext>) {
        group.post { request, _ in
            let input = try await body.decode(CreateTenant.self, from: request)
            let tenant = try await tenants.create(name: try Validation.name(input.name, field: "name"))
            return try JSONResponse.make(tenant, status: .created)
        }
        group.get { request, _ in
            let page = try QueryParameters(request, accepting: QueryParameters.paging).page()
            return try JSONResponse.make(ListPage("tenants", try await tenants.list(limit: page.limit, after: page.cursor)))
        }
        group.get(":tenantId") { _, context in
            try JSONResponse.make(try await tenant(context))
        }
        group.post(":tenantId/disable") { _, context in
            try await setDisabled(true, context)
        }
        group.post(":tenantId/enable") { _, context in
            try await setDisabled(false, context)
        }
        group.post(":tenantId/keys") { request, context in
            let tenant = try await tenant(context)
            let input = try await body.decode(CreateAdminKey.self, from: request)
            let name = try Validation.name(input.name, field: "name")
            guard let created = try await keys.create(tenantID: tenant.id, name: name, role: .admin, createdBy: .operator) else {
                throw CountersignError(.notFound, "no such tenant")
            }
            context.logger.notice("admin key created by operator", metadata: ["tenant": "\(tenant.id.text)", "key": "\(created.key.prefix)"])
            return try JSONResponse.make(CreatedKey(created), status: .created)
        }
    }

    private func tenant(_ context: OperatorRequestContext) async throws -> Tenant {
        guard let tenant = try await tenants.get(id: try context.parameters.uuid("tenantId")) else {
            throw CountersignError(.notFound, "no such tenant")
        }
        return tenant
    }

    private func setDisabled(_ disabled: Bool, _ context: OperatorRequestContext) async throws -> Response {
        guard let tenant = try await tenants.setDisabled(id: try context.parameters.uuid("tenantId"), disabled) else {
            throw CountersignError(.notFound, "no such tenant")
        }
        authenticator.forget(tenantID: tenant.id)
        context.logger.notice(disabled ? "tenant disabled" : "tenant enabled", metadata: ["tenant": "\(tenant.id.text)"])
        return try JSONResponse.make(tenant)
    }
}

/// A key as returned once, at creation: its metadata and the whole key text.
struct CreatedKey: Encodable {
    var key: APIKey
    /// The only time the key is shown.
    var secret: String

    init(_ created: APIKeyStore.Created) {
        key = created.key
        secret = created.token.text
    }
}
