public import Foundation

/// The service's answer to an outcome report.
public struct OutcomeResponse: Codable, Hashable, Sendable {
    public var decision: DecisionRecord
    /// This report counted a rejection (false when it repeated an earlier one).
    public var counted: Bool
    /// The rejection counter the decision's credential now has, when it has one.
    public var counter: Counter?
    /// For a `refused` outcome (a 403 after the credential): `cancelAuthenticationChallenge`,
    /// stop retrying.
    public var disposition: Disposition?
    /// For a `refused` outcome: `server_refused`.
    public var reasonCode: String?

    public init(decision: DecisionRecord, counted: Bool, counter: Counter? = nil, disposition: Disposition? = nil, reasonCode: String? = nil) {
        self.decision = decision
        self.counted = counted
        self.counter = counter
        self.disposition = disposition
        self.reasonCode = reasonCode
    }

    /// A rejection counter as an outcome leaves it.
    public struct Counter: Codable, Hashable, Sendable {
        public var failures: Int
        public var remainingAttempts: Int?
        public var blockedUntil: Date?

        public init(failures: Int, remainingAttempts: Int? = nil, blockedUntil: Date? = nil) {
            self.failures = failures
            self.remainingAttempts = remainingAttempts
            self.blockedUntil = blockedUntil
        }
    }
}
