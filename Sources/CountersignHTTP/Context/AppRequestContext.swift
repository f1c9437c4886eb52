public import Hummingbird
import Logging
import Synchronization

/// The context of every request. Authenticated route groups narrow it to a context that can
/// only exist with the right principal (`OperatorRequestContext`, `AdminRequestContext`,
/// `ClientRequestContext`).
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `AuthenticationMiddleware`; `nil` on the unauthenticated probes.
    public var principal: Principal?
    /// Who asked, for the access log line; `nil` when that line is not written at all.
    let accessLog: AccessLogFields?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        accessLog = source.logger.logLevel <= RequestObservationMiddleware.lowestLevel ? AccessLogFields() : nil
    }
}

/// The metadata `AuthenticationMiddleware` learns (tenant, key prefix) for the access log line
/// that `RequestObservationMiddleware` writes. That middleware sits outside, and a context is a
/// value: what the inner one sets on its copy never reaches the outer one, this box does.
final class AccessLogFields: Sendable {
    private let fields = Mutex<Logger.Metadata>([:])

    var metadata: Logger.Metadata { fields.withLock { $0 } }

    func record(_ metadata: Logger.Metadata) {
        fields.withLock { $0.merge(metadata) { _, new in new } }
    }
}
