public import CountersignCore
public import CountersignCrypto
public import Foundation
import Synchronization

/// Evaluates presented chains under a rule's trust settings with the crypto module's
/// `TrustEvaluator` (OpenSSL), keeping the rules' anchors parsed between evaluations.
public final class ServerTrustEvaluator: Sendable {
    private let anchors = Mutex<[String: [Certificate]]>([:])
    private static let anchorLimit = 10_000

    public init() {}

    /// The verdict on `chain` (leaf first) for `host` under `settings` at `now`.
    public func evaluate(chain: [Certificate], digest: String, host: String, settings: TrustSettings, at now: Date) -> ServerTrustVerdict {
        let request = TrustEvaluationRequest(
            chain: chain,
            host: host,
            extraAnchors: (settings.anchors ?? []).flatMap(parsedAnchors),
            useSystemAnchors: settings.useSystemAnchors ?? true,
            pins: settings.pins ?? [],
            allowExpired: settings.allowExpired ?? false,
            at: now
        )
        let evaluation = TrustEvaluator.evaluate(request)
        return ServerTrustVerdict(
            trusted: evaluation.trusted,
            host: host,
            failure: evaluation.failure.map { .init(code: $0.code.rawValue, detail: $0.detail, depth: $0.depth) },
            verifiedChain: evaluation.verifiedChainSubjects,
            leafSubject: evaluation.leafSubject,
            matchedPin: evaluation.matchedPin,
            // Whole seconds: a remembered evaluation goes through JSON and must read back the same.
            evaluatedAt: Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down)),
            chainSHA256: digest,
            // Dates excused are no end: the rule trusts the chain whatever they say.
            validUntil: evaluation.trusted && !request.allowExpired ? evaluation.verifiedChain.map(\.notAfter).min() : nil
        )
    }

    // Policies refuse anchors that do not parse when they are saved; one that still does not
    // (a policy saved by an older version) adds no anchor, so evaluations fail closed.
    private func parsedAnchors(_ pem: String) -> [Certificate] {
        if let cached = anchors.withLock({ $0[pem] }) { return cached }
        let parsed = (try? Certificate.parseChain(pem: pem)) ?? []
        anchors.withLock { anchors in
            if anchors.count >= Self.anchorLimit { anchors.removeAll(keepingCapacity: true) }
            anchors[pem] = parsed
        }
        return parsed
    }
}
