extension CountersignSessionDelegate {
    /// How the delegate names itself to Countersign and what it does when Countersign cannot help.
    public struct Configuration: Sendable {
        /// The device's or process's stable name for itself (`clientId`, 1 to 200 characters).
        public var clientId: String
        /// A label for the Countersign session (`label`), e.g. which URLSession it twins.
        public var sessionLabel: String?
        /// The Countersign session's lifetime; `nil` takes the tenant's default. A session that
        /// expires while the URLSession lives on is replaced by a new one at the next challenge.
        public var sessionTTLSeconds: Int?
        /// The answer when Countersign cannot be asked or its answer cannot be used (unreachable,
        /// 5xx, garbage, timeout, a credential this platform cannot use).
        public var fallback: Fallback
        /// Longest wait for Countersign's answer to one challenge, session opening and retries
        /// included; then the fallback answers and a late answer is discarded.
        public var challengeTimeout: Duration
        /// A task that has failed this many times at the same place gets
        /// `cancelAuthenticationChallenge` without asking Countersign: a guard against endless
        /// retries (FoundationNetworking retries a refused credential without limit) when the
        /// tenant's policy does not block the credential first.
        public var maxAttemptsPerTask: Int
        /// Report outcomes when tasks complete (accepted / rejected / cancelled).
        public var reportsOutcomes: Bool
        /// How patiently an outcome report is tried again. An `accepted` report lost resets no
        /// count: the rejections a task's retries counted stay, and add up towards a block of the
        /// fleet's credential. By default 6 tries over about 15 s, enough to outlast a restart of
        /// the service; ``CountersignSessionDelegate/waitUntilIdle()`` and the Countersign
        /// session's invalidation wait for them.
        public var outcomeRetry: RetryPolicy
        /// The longest a released credential is kept on the device. `.forSession` by default:
        /// Countersign keeps `permanent` and `synchronizable` credentials itself (for the
        /// client id, for the tenant), where a block, a new secret or a deletion reaches them;
        /// in the device's keychain (or iCloud Keychain) URLSession would send them without
        /// asking, even when the service is out of reach and the fallback is
        /// `performDefaultHandling`. `nil` keeps what the service answered.
        public var persistenceLimit: Persistence?
        /// Methods answered `performDefaultHandling` at once, without asking Countersign (for
        /// example `.serverTrust`, to leave TLS to the system).
        public var ignoredMethods: Set<AuthenticationMethod>
        /// Called with everything the delegate does (decisions, fallbacks, reports), on whatever
        /// thread it happens; keep it short. Events never carry a secret.
        public var onEvent: (@Sendable (Event) -> Void)?

        public init(
            clientId: String,
            sessionLabel: String? = nil,
            sessionTTLSeconds: Int? = nil,
            fallback: Fallback = .performDefaultHandling,
            challengeTimeout: Duration = .seconds(15),
            maxAttemptsPerTask: Int = 10,
            reportsOutcomes: Bool = true,
            outcomeRetry: RetryPolicy = RetryPolicy(maxAttempts: 6, initialBackoff: .milliseconds(500), maxBackoff: .seconds(8)),
            persistenceLimit: Persistence? = .forSession,
            ignoredMethods: Set<AuthenticationMethod> = [],
            onEvent: (@Sendable (Event) -> Void)? = nil
        ) {
            self.clientId = clientId
            self.sessionLabel = sessionLabel
            self.sessionTTLSeconds = sessionTTLSeconds
            self.fallback = fallback
            self.challengeTimeout = challengeTimeout
            self.maxAttemptsPerTask = max(1, maxAttemptsPerTask)
            self.reportsOutcomes = reportsOutcomes
            self.outcomeRetry = outcomeRetry
            self.persistenceLimit = persistenceLimit
            self.ignoredMethods = ignoredMethods
            self.onEvent = onEvent
        }
    }

    /// What the delegate answers by itself.
    public enum Fallback: String, Sendable, Hashable, CaseIterable {
        /// As if the app had no delegate (the default). On Linux, where URLSession would leave the
        /// task hanging, this ends the task with the 401 instead (see ``CountersignSessionDelegate``).
        case performDefaultHandling
        /// Fail the task.
        case cancelAuthenticationChallenge
        /// Try the next protection space (Linux: fails the task).
        case rejectProtectionSpace

        var disposition: Disposition {
            switch self {
            case .performDefaultHandling: .performDefaultHandling
            case .cancelAuthenticationChallenge: .cancelAuthenticationChallenge
            case .rejectProtectionSpace: .rejectProtectionSpace
            }
        }
    }
}
