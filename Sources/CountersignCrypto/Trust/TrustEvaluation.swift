public import Foundation

/// The outcome of `TrustEvaluator.evaluate`: a verdict and what justified it.
public struct TrustEvaluation: Sendable {
    /// Whether the chain is trusted for the host under the request's settings.
    public let trusted: Bool
    /// Why not, when `trusted` is false.
    public let failure: TrustFailure?
    /// The path OpenSSL built from the leaf to a trust anchor, leaf first, anchor last.
    /// Present whenever such a path was found, also when a later check (host, dates, usage,
    /// pins) failed; empty when no path reached an anchor.
    public let verifiedChain: [Certificate]
    /// Subject of the presented leaf, when it could be parsed.
    public let leafSubject: String?
    /// The pin that matched, when pins were configured and the chain is trusted.
    public let matchedPin: String?
    /// The time validity periods were checked at.
    public let evaluationTime: Date

    /// Subjects of `verifiedChain` in RFC 2253 form, leaf first, anchor last.
    public var verifiedChainSubjects: [String] {
        verifiedChain.map(\.subject)
    }

    init(
        failure: TrustFailure?,
        verifiedChain: [Certificate],
        leafSubject: String?,
        matchedPin: String?,
        evaluationTime: Date
    ) {
        self.trusted = failure == nil
        self.failure = failure
        self.verifiedChain = verifiedChain
        self.leafSubject = leafSubject
        self.matchedPin = matchedPin
        self.evaluationTime = evaluationTime
    }
}
