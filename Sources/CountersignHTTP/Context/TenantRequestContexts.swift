public import CountersignCore
public import Foundation
public import Hummingbird

/// A request from the operator key.
public struct OperatorRequestContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage

    public init(context: AppRequestContext) throws {
        guard case .operator = context.principal else {
            throw CountersignError(.insufficientRole, "this endpoint needs the operator key")
        }
        coreContext = context.coreContext
    }
}

/// A request from a tenant key with role `admin`.
public struct AdminRequestContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let key: APIKey
    public var tenantID: UUID { key.tenantID }

    public init(context: AppRequestContext) throws {
        key = try context.requireTenantKey(role: .admin)
        coreContext = context.coreContext
    }
}

/// A request from a tenant key with role `client`.
public struct ClientRequestContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let key: APIKey
    public var tenantID: UUID { key.tenantID }

    public init(context: AppRequestContext) throws {
        key = try context.requireTenantKey(role: .client)
        coreContext = context.coreContext
    }
}

extension AppRequestContext {
    func requireTenantKey(role: APIKeyRole) throws -> APIKey {
        guard case .tenantKey(let key) = principal else {
            throw CountersignError(.insufficientRole, "this endpoint needs a tenant key with role '\(role.rawValue)'")
        }
        guard key.role == role else {
            throw CountersignError(
                .insufficientRole,
                "this endpoint needs a key with role '\(role.rawValue)'; this key has role '\(key.role.rawValue)'"
            )
        }
        return key
    }
}
