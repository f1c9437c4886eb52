public import CountersignCore
import Foundation

/// Who sent a request, once its bearer key checked out.
public enum Principal: Sendable {
    /// The holder of the operator key: creates and disables tenants.
    case `operator`
    /// A tenant's API key, with its role.
    case tenantKey(APIKey)
}
