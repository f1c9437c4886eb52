import CountersignCore
import CountersignService
import CountersignStorage
import Foundation
import Hummingbird
import Logging

/// The admin API for the credential store. No response ever carries a secret.
struct CredentialController: Sendable {
    let credentials: CredentialStore
    let cache: DecisionStateCache
    let body: JSONBody

    /// A credential to save. Keyed like a keychain internet password.
    struct SaveCredential: Codable {
        var host: String
        var port: Int?
        var `protocol`: String?
        var realm: String?
        var path: String?
        var authenticationMethod: AuthenticationMethod?
        var isProxy: Bool?
        var account: String
        var password: String
        var domain: String?
        var label: String?
        /// `false`: the password never leaves the service (`Credential.exportable`).
        var exportable: Bool?

        var attributes: CredentialAttributes {
            CredentialAttributes(
                host: host, port: port, protocolName: `protocol`, realm: realm, path: path,
                authenticationMethod: authenticationMethod, isProxy: isProxy ?? false, account: account
            )
        }
    }

    /// Changes to a credential: a field left out stays; `null` clears an optional one.
    struct UpdateCredential: Codable {
        var host: String?
        var port: Int??
        var `protocol`: String??
        var realm: String??
        var path: String??
        var authenticationMethod: AuthenticationMethod??
        var isProxy: Bool?
        var account: String?
        var password: String?
        var domain: String??
        var label: String??
        var exportable: Bool?

        enum CodingKeys: String, CodingKey {
            case host, port, `protocol`, realm, path, authenticationMethod, isProxy, account, password, domain, label, exportable
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            func field<T: Decodable>(_ key: CodingKeys) throws -> T?? {
                container.contains(key) ? .some(try container.decodeIfPresent(T.self, forKey: key)) : .none
            }
            // A field every credential has cannot be cleared: `null` for it is refused, not ignored.
            func required<T: Decodable>(_ key: CodingKeys) throws -> T? {
                container.contains(key) ? try container.decode(T.self, forKey: key) : nil
            }
            host = try required(.host)
            port = try field(.port)
            `protocol` = try field(.protocol)
            realm = try field(.realm)
            path = try field(.path)
            authenticationMethod = try field(.authenticationMethod)
            isProxy = try required(.isProxy)
            account = try required(.account)
            password = try required(.password)
            domain = try field(.domain)
            label = try field(.label)
            exportable = try required(.exportable)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            func field<T: Encodable>(_ value: T??, _ key: CodingKeys) throws {
                if let value { try container.encode(value, forKey: key) }
            }
            try container.encodeIfPresent(host, forKey: .host)
            try field(port, .port)
            try field(`protocol`, .protocol)
            try field(realm, .realm)
            try field(path, .path)
            try field(authenticationMethod, .authenticationMethod)
            try container.encodeIfPresent(isProxy, forKey: .isProxy)
            try container.encodeIfPresent(account, forKey: .account)
            try container.encodeIfPresent(password, forKey: .password)
            try field(domain, .domain)
            try field(label, .label)
            try container.encodeIfPresent(exportable, forKey: .exportable)
        }

        func applied(to attributes: CredentialAttributes) -> CredentialAttributes {
            var attributes = attributes
            if let host { attributes.host = host }
            if let port { attributes.port = port }
            if let `protocol` { attributes.protocolName = `protocol` }
            if let realm { attributes.realm = realm }
            if let path { attributes.path = path }
            if let authenticationMethod { attributes.authenticationMethod = authenticationMethod }
            if let isProxy { attributes.isProxy = isProxy }
            if let account { attributes.account = account }
            return attributes
        }
    }

    func addRoutes(to group: RouterGroup<AdminRequestContext>) {
        group.post { request, context in
            let input = try await body.decode(SaveCredential.self, from: request)
            let attributes = input.attributes
            try attributes.validate()
            try Self.validatePasswordMethod(attributes.authenticationMethod)
            try Self.validateSecret(password: input.password, domain: input.domain, label: input.label)
            let saved = try await credentials.save(
                tenantID: context.tenantID,
                .init(
                    attributes: attributes, domain: input.domain, label: input.label, password: input.password, owner: .tenant(submittedBy: nil),
                    exportable: input.exportable
                ),
                actor: context.actor
            )
            cache.forgetTenant(context.tenantID)
            return try JSONResponse.make(CredentialView(saved.credential), status: saved.created ? .created : .ok)
        }
        group.get { request, context in
            let query = try QueryParameters(request, accepting: QueryParameters.paging + ["host", "account"])
            let page = try query.page()
            let list = try await credentials.list(
                tenantID: context.tenantID,
                host: try query.checked("host") { try Validation.text($0, field: "host", maxLength: 253) },
                account: try query.checked("account") { try Validation.name($0, field: "account", maxLength: 1000) },
                limit: page.limit,
                after: page.cursor
            )
            return try JSONResponse.make(ListPage("credentials", list, CredentialView.init))
        }
        group.get(":credentialId") { _, context in
            try JSONResponse.make(CredentialView(try await credential(context)))
        }
        group.patch(":credentialId") { request, context in
            let existing = try await credential(context)
            let input = try await body.decode(UpdateCredential.self, from: request)
            // Checked here for a quick answer, and again on the attributes the row has when the
            // store locks it, which the edit applies to so that a concurrent edit of another
            // field stays.
            try input.applied(to: existing.attributes).validate()
            try Self.validatePasswordMethod(input.authenticationMethod ?? nil)
            try Self.validateSecret(password: input.password, domain: input.domain ?? nil, label: input.label ?? nil)
            let changes = CredentialStore.Changes(
                attributes: { current in
                    let attributes = input.applied(to: current)
                    try attributes.validate()
                    return attributes
                },
                domain: input.domain,
                label: input.label,
                password: input.password,
                exportable: input.exportable
            )
            guard let updated = try await credentials.update(tenantID: context.tenantID, id: existing.id, changes, actor: context.actor) else {
                throw CountersignError(.notFound, "no such credential")
            }
            cache.forgetTenant(context.tenantID)
            return try JSONResponse.make(CredentialView(updated))
        }
        group.delete(":credentialId") { _, context in
            guard try await credentials.delete(tenantID: context.tenantID, id: try context.parameters.uuid("credentialId"), actor: context.actor) else {
                throw CountersignError(.notFound, "no such credential")
            }
            cache.forgetTenant(context.tenantID)
            return Response(status: .noContent)
        }
        group.get(":credentialId/history") { request, context in
            let page = try QueryParameters(request, accepting: QueryParameters.paging).page()
            guard
                let history = try await credentials.history(
                    tenantID: context.tenantID,
                    id: try context.parameters.uuid("credentialId"),
                    limit: page.limit,
                    after: page.cursor
                )
            else {
                throw CountersignError(.notFound, "no such credential")
            }
            return try JSONResponse.make(ListPage("history", history))
        }
    }

    private func credential(_ context: AdminRequestContext) async throws -> Credential {
        guard let credential = try await credentials.get(tenantID: context.tenantID, id: try context.parameters.uuid("credentialId")) else {
            throw CountersignError(.notFound, "no such credential")
        }
        return credential
    }

    /// A password answers only password methods: one saved for the TLS methods would be stored,
    /// and released nowhere (identities are saved with `/v1/identities`).
    static func validatePasswordMethod(_ method: AuthenticationMethod?) throws {
        guard let method, method.isKnown, !method.usesPassword else { return }
        throw CountersignError(
            .invalidField,
            "'authenticationMethod' \(method.rawValue) is answered with no password: a credential's method is a password method (client identities are saved with /v1/identities)"
        )
    }

    static func validateSecret(password: String?, domain: String?, label: String?) throws {
        if let password, password.utf8.count > 4096 { throw CountersignError(.invalidField, "'password' is longer than 4096 bytes") }
        if let domain { try Validation.name(domain, field: "domain", maxLength: 256) }
        if let label { try Validation.text(label, field: "label", maxLength: 200) }
    }
}

// Request bodies carrying a password must never reach a log line through interpolation, nor
// through `dump` or anything else that reads a mirror.
extension CredentialController.SaveCredential: CustomStringConvertible, CustomReflectable {
    var description: String { "SaveCredential(host: \(host), account: \(account), password: redacted)" }
    var customMirror: Mirror { Mirror(self, children: ["host": host, "account": account, "password": "redacted"], displayStyle: .struct) }
}

extension CredentialController.UpdateCredential: CustomStringConvertible, CustomReflectable {
    var description: String { "UpdateCredential(password: \(password == nil ? "unchanged" : "redacted"))" }
    var customMirror: Mirror { Mirror(self, children: ["password": password == nil ? "unchanged" : "redacted"], displayStyle: .struct) }
}

/// A credential as admins see it: its attributes and owner, never its secret.
struct CredentialView: Encodable {
    var credential: Credential

    init(_ credential: Credential) {
        self.credential = credential
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, host, port, `protocol`, realm, path, authenticationMethod, isProxy, account, domain, label
        case owner, ownerClientId, ownerSessionId, submittedByClient, secretVersion, exportable, createdAt, updatedAt
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let attributes = credential.attributes
        try container.encode(credential.id, forKey: .id)
        try container.encode(credential.kind, forKey: .kind)
        try container.encode(attributes.host, forKey: .host)
        try container.encode(attributes.port, forKey: .port)
        try container.encode(attributes.protocolName, forKey: .protocol)
        try container.encode(attributes.realm, forKey: .realm)
        try container.encode(attributes.path, forKey: .path)
        try container.encode(attributes.authenticationMethod, forKey: .authenticationMethod)
        try container.encode(attributes.isProxy, forKey: .isProxy)
        try container.encode(attributes.account, forKey: .account)
        try container.encode(credential.domain, forKey: .domain)
        try container.encode(credential.label, forKey: .label)
        switch credential.owner {
        case .tenant(let submittedBy):
            try container.encode("tenant", forKey: .owner)
            try container.encode(submittedBy, forKey: .submittedByClient)
        case .client(let clientID):
            try container.encode("client", forKey: .owner)
            try container.encode(clientID, forKey: .ownerClientId)
            try container.encode(clientID, forKey: .submittedByClient)
        case .session(let sessionID, let clientID):
            try container.encode("session", forKey: .owner)
            try container.encode(clientID, forKey: .ownerClientId)
            try container.encode(sessionID, forKey: .ownerSessionId)
            try container.encode(clientID, forKey: .submittedByClient)
        }
        try container.encode(credential.secretVersion, forKey: .secretVersion)
        try container.encode(credential.exportable, forKey: .exportable)
        try container.encode(credential.createdAt, forKey: .createdAt)
        try container.encode(credential.updatedAt, forKey: .updatedAt)
    }
}

extension AdminRequestContext {
    /// Who did it, as history and policy versions record it.
    var actor: String { "key:\(key.id.text)" }
}
