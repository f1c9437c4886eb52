import Foundation

/// How often and how patiently a ``CountersignClient`` tries a call again, and which failures
/// it considers at all.
///
/// What is retried depends on what a repeat could do on the service, per operation:
/// - **Idempotent** calls (`getSession`, `invalidateSession`, `reportOutcome`: the service
///   counts the same outcome once) are retried after any transport failure (refused, reset,
///   timed out) and after 502, 503 and 504.
/// - **Others** (`openSession`, `decideChallenge`, `answerRawResponse`, `submitCredential`,
///   `answerSecurityChecks`) are retried only when the request certainly did not take effect: the
///   connection could not be made at all (refused, host not found, offline), or the service
///   answered 503 with its own error body, after which the contract promises that a repeat
///   counts nothing twice (a raw response must name the header its request carried:
///   ``RawResponse/carriedHeader``, ``RawResponse/previousDecisionId``).
///   A 503 without it comes from something in between (a load balancer, a proxy), which may have
///   passed the request on before failing: not retried. A challenge or a raw
///   response is never resent after a timeout or a lost connection: the first copy may have been
///   decided and recorded (and a second 401 counted as a rejection, a Digest nonce count spent),
///   and a second decision for the same challenge would leave the first one without an outcome.
/// A 429 is treated like a 503. Every other answer is final.
///
/// An answer that would be retried and says `Retry-After` (seconds or an HTTP date: a load
/// balancer's or a rate limiter's 503 or 429) is tried again no sooner than it asks, and not at
/// all when it asks for longer than ``maxBackoff``: the call then fails with that answer at once.
public struct RetryPolicy: Sendable, Hashable {
    /// Tries in all, the first included (1 disables retries).
    public var maxAttempts: Int
    /// Wait before the first retry; doubled for each further one, with ±20% jitter.
    public var initialBackoff: Duration
    /// Longest wait between tries.
    public var maxBackoff: Duration

    public init(maxAttempts: Int = 3, initialBackoff: Duration = .milliseconds(100), maxBackoff: Duration = .seconds(2)) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
    }

    /// Three tries, 100 ms then 200 ms apart.
    public static let `default` = RetryPolicy()
    /// One try.
    public static let never = RetryPolicy(maxAttempts: 1)

    /// What a repeat of an operation could do on the service.
    enum Safety: Sendable {
        /// Repeating changes nothing more than the first call did.
        case idempotent
        /// Repeating could act twice: repeat only what certainly did not arrive.
        case unsafe
    }

    /// Whether a transport failure may be retried for an operation of `safety`.
    static func mayRetry(_ error: URLError, _ safety: Safety) -> Bool {
        if error.code == .cancelled { return false }
        switch safety {
        case .idempotent: return true
        case .unsafe: return notDelivered.contains(error.code)
        }
    }

    /// Whether an HTTP status may be retried for an operation of `safety`; `fromCountersign`: the
    /// answer carries Countersign's own error body.
    static func mayRetry(status: Int, _ safety: Safety, fromCountersign: Bool) -> Bool {
        switch status {
        // Only Countersign's 503 promises that a repeat counts nothing twice; an intermediary's may come
        // after it passed the request on.
        case 503: return safety == .idempotent || fromCountersign
        case 429: return true
        case 502, 504: return safety == .idempotent
        default: return false
        }
    }

    /// Failures that happen before any byte of the request leaves the machine.
    static let notDelivered: Set<URLError.Code> = [.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet]

    /// The wait before the next try after an answer that said `Retry-After` (`nil`: it did not):
    /// at least what it asks, or no retry at all (`nil`) when it asks for more than `maxBackoff`.
    /// A load balancer or rate limiter that names its own wait is not hammered sooner, and a
    /// challenge is not held longer than the policy allows; the caller's fallback answers instead.
    func delay(after attempt: Int, retryAfter: Duration?) -> Duration? {
        let backoff = backoff(after: attempt)
        guard let retryAfter else { return backoff }
        guard retryAfter <= maxBackoff else { return nil }
        return max(backoff, retryAfter)
    }

    /// A `Retry-After` field (RFC 9110 §10.2.3) as a wait from `now`: delay-seconds or an
    /// HTTP-date; `nil` when absent or neither.
    static func retryAfter(_ field: String?, now: Date = Date()) -> Duration? {
        guard let field = field?.trimmingCharacters(in: .whitespaces), !field.isEmpty else { return nil }
        if field.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            // More digits than an Int holds is still a wait far beyond any policy.
            return .seconds(Int(field) ?? Int.max)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: field) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now)))
    }

    /// The wait before try number `attempt + 1` (`attempt` counts from 1), never above
    /// `maxBackoff`: the jitter is taken before the bound, or a capped wait could run 20% over it.
    func backoff(after attempt: Int) -> Duration {
        let exponent = min(attempt - 1, 16)
        let base = min(initialBackoff * (1 << exponent), maxBackoff)
        return min(base * Double.random(in: 0.8...1.2), maxBackoff)
    }
}
