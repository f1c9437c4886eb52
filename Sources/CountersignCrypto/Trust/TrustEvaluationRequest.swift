public import Foundation

/// What to evaluate: a server's chain as received, for a host, against a tenant's trust settings.
public struct TrustEvaluationRequest: Sendable {
    enum PresentedChain: Sendable {
        case certificates([Certificate])
        case der([[UInt8]])
    }

    let presented: PresentedChain

    /// The host the client connected to: a DNS name (`api.example.com`, a trailing dot is
    /// ignored) or an IP literal (`192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`).
    public var host: String
    /// Certificates trusted as anchors in addition to (or instead of) the system's. An anchor
    /// need not be self-signed: an intermediate, or the server's own leaf, ends the path there.
    public var extraAnchors: [Certificate]
    /// Whether the operating system's CA bundle (OpenSSL's default paths) also provides anchors.
    public var useSystemAnchors: Bool
    /// SPKI SHA-256 pins in base64 (`Certificate.spkiSHA256Base64`). When not empty, the
    /// chain is trusted only if one of its verified certificates, leaf to anchor, matches one.
    public var pins: [String]
    /// Whether certificates outside their validity period are accepted. Only the date is
    /// excused; every other check still applies.
    public var allowExpired: Bool
    /// The time at which validity periods are checked.
    public var evaluationTime: Date

    /// The presented certificates in DER, leaf first.
    public var presentedChainDER: [[UInt8]] {
        switch presented {
        case .certificates(let certificates): certificates.map(\.derBytes)
        case .der(let der): der
        }
    }

    /// A request for a chain already parsed, leaf first, followed by the intermediates the
    /// server sent (in any order; a root among them is harmless).
    public init(
        chain: [Certificate],
        host: String,
        extraAnchors: [Certificate] = [],
        useSystemAnchors: Bool = true,
        pins: [String] = [],
        allowExpired: Bool = false,
        at evaluationTime: Date = Date()
    ) {
        self.presented = .certificates(chain)
        self.host = host
        self.extraAnchors = extraAnchors
        self.useSystemAnchors = useSystemAnchors
        self.pins = pins
        self.allowExpired = allowExpired
        self.evaluationTime = evaluationTime
    }

    /// A request for a chain as DER bytes straight from the client, leaf first. Bytes that do
    /// not parse make the evaluation fail with `malformed_certificate`.
    public init(
        chainDER: [[UInt8]],
        host: String,
        extraAnchors: [Certificate] = [],
        useSystemAnchors: Bool = true,
        pins: [String] = [],
        allowExpired: Bool = false,
        at evaluationTime: Date = Date()
    ) {
        self.presented = .der(chainDER)
        self.host = host
        self.extraAnchors = extraAnchors
        self.useSystemAnchors = useSystemAnchors
        self.pins = pins
        self.allowExpired = allowExpired
        self.evaluationTime = evaluationTime
    }
}
