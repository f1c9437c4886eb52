import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of the client's own URLSession, which talks to Countersign.
///
/// Countersign authenticates with the bearer key, never with an HTTP challenge: a 401 with
/// `WWW-Authenticate: Basic` on the way to it (a misconfigured proxy) is cancelled at once rather
/// than answered. Without this, swift-corelibs-foundation leaves such a task hanging forever
/// (its default handling does nothing when no credential is stored). TLS challenges get the
/// system's default handling, so an HTTPS service is verified as usual on Apple platforms.
///
/// Redirects are not followed: the contract has none, so one comes from something misconfigured
/// in between (a captive portal, a load balancer sending http to https or elsewhere), and URLSession
/// would send the request again, bearer key included, to wherever it points. The 3xx is the
/// answer instead (`http_<status>`).
final class InternalSessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    /// The status of the HTTP challenges refused, by request URL: the task then fails as
    /// cancelled, which would read as "could not be reached".
    private let refusedChallenges = Mutex<[String: Int]>([:])

    /// The status that asked for HTTP authentication on the way to `url`, if one did since
    /// the last time this was asked; taken, so that a later cancellation of the app's own is not
    /// told as a login asked for.
    func takeRefusedChallengeStatus(for url: URL?) -> Int? {
        guard let url else { return nil }
        return refusedChallenges.withLock { $0.removeValue(forKey: url.absoluteString) }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let disposition = Self.disposition(for: challenge.protectionSpace.authenticationMethod)
        if disposition == .cancelAuthenticationChallenge, let url = task.originalRequest?.url {
            let status = (challenge.failureResponse as? HTTPURLResponse)?.statusCode ?? (challenge.protectionSpace.isProxy() ? 407 : 401)
            refusedChallenges.withLock { refused in
                // A misconfiguration repeats on every call; a bound keeps odd URLs from piling up.
                if refused.count >= 64 { refused.removeAll() }
                refused[url.absoluteString] = status
            }
        }
        completionHandler(disposition, nil)
    }

    func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(Self.disposition(for: challenge.protectionSpace.authenticationMethod), nil)
    }

    static func disposition(for method: String) -> URLSession.AuthChallengeDisposition {
        switch AuthenticationMethod(rawValue: method) {
        case .serverTrust, .clientCertificate: .performDefaultHandling
        default: .cancelAuthenticationChallenge
        }
    }
}
