import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where URLSession differs between Apple's Foundation and swift-corelibs-foundation (Linux),
/// as measured with Swift 6.3.1 on Linux.
///
/// On Linux, FoundationNetworking raises challenges only for HTTP 401 responses with a Basic
/// `WWW-Authenticate` (no Digest, no 407, no TLS challenges), always to the task-specific delegate method;
/// it never proposes a credential and retries a rejected credential without limit, counting up
/// `previousFailureCount`. `rejectProtectionSpace` cancels the task, and `performDefaultHandling`
/// with no proposed credential does nothing at all: the task never completes (not even by
/// timeout). Cancelled tasks end with `NSURLErrorCancelled` and keep the 401 as `task.response`.
enum PlatformBehaviour {
    /// The disposition to hand URLSession for `disposition`: the same, except on Linux, where
    /// `performDefaultHandling` without a proposed credential becomes
    /// `cancelAuthenticationChallenge`, which ends the task with the 401 instead of leaving it hanging.
    static func deliverable(_ disposition: URLSession.AuthChallengeDisposition, hasProposedCredential: Bool) -> URLSession.AuthChallengeDisposition {
        #if canImport(FoundationNetworking)
        if disposition == .performDefaultHandling, !hasProposedCredential { return .cancelAuthenticationChallenge }
        #endif
        return disposition
    }

    /// The status an authentication failure has at a space: 407 from proxies, 401 from origins.
    static func authenticationFailureStatus(isProxy: Bool) -> Int { isProxy ? 407 : 401 }
}

extension URLSession.AuthChallengeDisposition {
    /// The same answer in the contract's words.
    var contractDisposition: Disposition {
        switch self {
        case .useCredential: .useCredential
        case .performDefaultHandling: .performDefaultHandling
        case .cancelAuthenticationChallenge: .cancelAuthenticationChallenge
        case .rejectProtectionSpace: .rejectProtectionSpace
        @unknown default: .performDefaultHandling
        }
    }
}

extension Disposition {
    /// The same answer in URLSession's words.
    var urlSessionDisposition: URLSession.AuthChallengeDisposition {
        switch self {
        case .useCredential: .useCredential
        case .performDefaultHandling: .performDefaultHandling
        case .cancelAuthenticationChallenge: .cancelAuthenticationChallenge
        case .rejectProtectionSpace: .rejectProtectionSpace
        }
    }
}
