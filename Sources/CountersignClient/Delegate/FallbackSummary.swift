public import Foundation

/// A challenge the delegate answered without the service's decision, and why.
public struct FallbackSummary: Sendable, Hashable {
    /// The URLSession task it was for; `nil` for a session-wide challenge.
    public var taskIdentifier: Int?
    public var protectionSpace: ProtectionSpace
    public var reason: FallbackReason
    /// What the delegate handed URLSession.
    public var appliedDisposition: Disposition
    /// The service's decision, when there was one the delegate could not use.
    public var decisionId: UUID?
    /// The disposition the fallback asked for, when this platform could not take it as it is
    /// (`performDefaultHandling` without a proposed credential on Linux, which would hang the
    /// task, goes as `cancelAuthenticationChallenge`).
    public var replacedDisposition: Disposition? = nil
}

/// Why the delegate answered a challenge by itself.
public enum FallbackReason: Sendable, Hashable {
    /// The service could not be asked or did not answer usably: unreachable, 5xx, an answer that
    /// is not the contract's JSON, a refused key.
    case serviceFailed(CountersignClientError)
    /// No answer within ``CountersignSessionDelegate/Configuration/challengeTimeout``.
    case timedOut
    /// The service released a credential this platform cannot use (a client identity or server
    /// trust on Linux, an unknown kind).
    case unusableCredential(String)
    /// The task failed this often at the same place already
    /// (``CountersignSessionDelegate/Configuration/maxAttemptsPerTask``); cancelled.
    case tooManyAttempts(Int)
    /// The URLSession was invalidated; its Countersign session is gone.
    case invalidated
    /// The method is in ``CountersignSessionDelegate/Configuration/ignoredMethods``.
    case ignoredMethod
}

extension FallbackSummary: CustomStringConvertible {
    public var description: String {
        let replaced = replacedDisposition.map { " (in place of \($0.rawValue), which would hang the task here)" } ?? ""
        return "fallback \(appliedDisposition.rawValue)\(replaced) for \(protectionSpace.host):\(protectionSpace.port): \(reason)"
    }
}

extension FallbackReason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .serviceFailed(let error): "\(error)"
        case .timedOut: "Countersign did not answer in time"
        case .unusableCredential(let reason): "the released credential cannot be used here: \(reason)"
        case .tooManyAttempts(let count): "the task already failed \(count) times here"
        case .invalidated: "the session is invalidated"
        case .ignoredMethod: "the method is not forwarded"
        }
    }
}
