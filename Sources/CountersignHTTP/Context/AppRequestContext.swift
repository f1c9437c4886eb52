public import Hummingbird

/// The context of every request. Authenticated route groups narrow it to a context that can
/// only exist with the right principal (`OperatorRequestContext`, `AdminRequestContext`,
/// `ClientRequestContext`).
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `AuthenticationMiddleware`; `nil` on the unauthenticated probes.
    public var principal: Principal?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
