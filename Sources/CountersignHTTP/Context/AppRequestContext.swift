import CountersignCore
public import Hummingbird
import Logging
import NIOCore
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
    /// The address the connection comes from (a proxy's, behind one), for the access log line.
    let peer: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        accessLog = source.logger.logLevel <= RequestObservationMiddleware.lowestLevel ? AccessLogFields() : nil
        peer = accessLog == nil ? nil : source.channel.remoteAddress
    }
}

/// Who asked, as `AuthenticationMiddleware` learns it, for the access log line that
/// `RequestObservationMiddleware` writes. That middleware sits outside, and a context is a value:
/// what the inner one sets on its copy never reaches the outer one, this box does.
final class AccessLogFields: Sendable {
    private let principal = Mutex<Principal?>(nil)

    func record(_ principal: Principal) {
        self.principal.withLock { $0 = principal }
    }

    /// The line's metadata, made only when the line is written.
    var metadata: Logger.Metadata {
        principal.withLock { $0 }.map(\.logMetadata) ?? [:]
    }
}

extension Principal {
    /// How a log line names who asked: never the key itself, its prefix at most.
    var logMetadata: Logger.Metadata {
        switch self {
        case .operator: ["principal": "operator"]
        case .tenantKey(let key): ["tenant": .string(key.tenantID.text), "key": .string(key.prefix)]
        }
    }
}
