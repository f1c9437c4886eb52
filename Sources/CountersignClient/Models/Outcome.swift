/// What happened after a decision: `accepted`, `rejected`, `cancelled`, `refused`.
/// Open: values a later service adds decode as themselves.
public struct Outcome: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// The upstream server took the credential; the rejection count resets.
    public static let accepted = Self(rawValue: "accepted")
    /// The upstream server refused the credential; it counts one rejection.
    public static let rejected = Self(rawValue: "rejected")
    /// The credential was never judged (the request was cancelled or failed first).
    public static let cancelled = Self(rawValue: "cancelled")
    /// The server took the credential and refused the request anyway (403); not counted. The
    /// service records a `rejected` report with upstream status 403 as this.
    public static let refused = Self(rawValue: "refused")
}

extension Outcome {
    /// What a response that is no challenge says about the credential its request carried:
    /// `accepted` (it got past authentication), except for a 400 (a server may refuse a request
    /// before it looks at the credential: a Digest `uri` that differs from the request line,
    /// RFC 7616 §3.4.6), a 407 (a proxy stopped the request before it reached the server) and a
    /// 5xx (the server failed, whatever it made of the credential), which judge nothing and are
    /// `cancelled`: reported `accepted`, they reset the fleet's count of a credential that may be
    /// wrong.
    public static func notChallenged(status: Int) -> Outcome {
        status == 400 || status == 407 || (500...599).contains(status) ? .cancelled : .accepted
    }
}
