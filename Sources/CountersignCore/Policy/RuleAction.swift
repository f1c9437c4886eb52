/// What a rule answers, and how it treats the credential it releases.
public struct RuleAction: Codable, Hashable, Sendable {
    public var disposition: Disposition
    /// Release exactly this credential.
    public var credentialId: UUIDString?
    /// Release a credential of this account that fits the protection space.
    public var account: String?
    /// The persistence the credential is released with (default `forSession`).
    public var persistence: Persistence?
    /// Rejections tolerated before the credential is blocked (default 3).
    public var maxFailures: Int?
    /// How long a block lasts (default 300 s).
    public var blockSeconds: Int?
    /// Added to the block for each earlier block of the same credential, as Keycloak's wait
    /// increment (default 0: every block lasts `blockSeconds`).
    public var blockIncrementSeconds: Int?
    /// Longest block, however many came before (default 86400 s).
    public var maxBlockSeconds: Int?
    /// The answer while the credential is blocked (default `cancelAuthenticationChallenge`).
    public var blockedDisposition: Disposition?
    /// The answer when no credential or identity fits, or server trust fails
    /// (default `cancelAuthenticationChallenge`).
    public var failureDisposition: Disposition?
    /// The persistences clients may submit their own credentials with for the spaces this
    /// rule matches (default `none` and `forSession`).
    public var clientPersistences: [Persistence]?
    /// Server-trust settings, for `NSURLAuthenticationMethodServerTrust`.
    public var trust: TrustSettings?
    /// Release exactly this client identity, for `NSURLAuthenticationMethodClientCertificate`.
    public var identityId: UUIDString?

    public init(
        disposition: Disposition,
        credentialId: UUIDString? = nil,
        account: String? = nil,
        persistence: Persistence? = nil,
        maxFailures: Int? = nil,
        blockSeconds: Int? = nil,
        blockIncrementSeconds: Int? = nil,
        maxBlockSeconds: Int? = nil,
        blockedDisposition: Disposition? = nil,
        failureDisposition: Disposition? = nil,
        clientPersistences: [Persistence]? = nil,
        trust: TrustSettings? = nil,
        identityId: UUIDString? = nil
    ) {
        self.disposition = disposition
        self.credentialId = credentialId
        self.account = account
        self.persistence = persistence
        self.maxFailures = maxFailures
        self.blockSeconds = blockSeconds
        self.blockIncrementSeconds = blockIncrementSeconds
        self.maxBlockSeconds = maxBlockSeconds
        self.blockedDisposition = blockedDisposition
        self.failureDisposition = failureDisposition
        self.clientPersistences = clientPersistences
        self.trust = trust
        self.identityId = identityId
    }

    public var releasePersistence: Persistence { persistence ?? .forSession }
    public var failureLimit: Int { maxFailures ?? 3 }
    public var whenBlocked: Disposition { blockedDisposition ?? .cancelAuthenticationChallenge }
    public var whenUnanswerable: Disposition { failureDisposition ?? .cancelAuthenticationChallenge }
    public var allowedClientPersistences: [Persistence] { clientPersistences ?? [.none, .forSession] }

    public var blockSchedule: BlockSchedule {
        BlockSchedule(
            seconds: blockSeconds ?? BlockSchedule.default.seconds,
            incrementSeconds: blockIncrementSeconds ?? BlockSchedule.default.incrementSeconds,
            maximumSeconds: maxBlockSeconds ?? BlockSchedule.default.maximumSeconds
        )
    }

    var references: [CredentialReference] {
        [credentialId.map { .credential($0.lowercased()) }, identityId.map { .identity($0.lowercased()) }].compactMap { $0 }
    }

    func validate(field: String) throws {
        if let account { try Validation.name(account, field: "\(field).account", maxLength: 1000) }
        // By id the account is never looked at: both would say two things and do one.
        if credentialId != nil, account != nil {
            throw CountersignError(.invalidPolicy, "\(field): name the credential by credentialId or by account, not both")
        }
        if let credentialId, !UUIDText.isValid(credentialId) {
            throw CountersignError(.invalidPolicy, "\(field).credentialId must be a UUID")
        }
        if let identityId, !UUIDText.isValid(identityId) {
            throw CountersignError(.invalidPolicy, "\(field).identityId must be a UUID")
        }
        if let maxFailures { try Validation.range(maxFailures, 1...10_000, field: "\(field).maxFailures") }
        if let blockSeconds { try Validation.range(blockSeconds, 1...31_536_000, field: "\(field).blockSeconds") }
        if let blockIncrementSeconds { try Validation.range(blockIncrementSeconds, 0...31_536_000, field: "\(field).blockIncrementSeconds") }
        if let maxBlockSeconds { try Validation.range(maxBlockSeconds, 1...31_536_000, field: "\(field).maxBlockSeconds") }
        // A maximum below the block itself would silently mean nothing: blocks never last less
        // than blockSeconds.
        if blockSchedule.maximumSeconds < blockSchedule.seconds {
            throw CountersignError(
                .invalidPolicy,
                "\(field).maxBlockSeconds (\(blockSchedule.maximumSeconds)\(maxBlockSeconds == nil ? ", the default" : "")) is below \(field).blockSeconds (\(blockSchedule.seconds)\(blockSeconds == nil ? ", the default" : ""))"
            )
        }
        if let clientPersistences, Set(clientPersistences).count != clientPersistences.count {
            throw CountersignError(.invalidPolicy, "\(field).clientPersistences lists a persistence twice")
        }
        if blockedDisposition == .useCredential || failureDisposition == .useCredential {
            throw CountersignError(.invalidPolicy, "\(field): blockedDisposition and failureDisposition cannot be useCredential")
        }
        try trust?.validate(field: "\(field).trust")
    }
}

/// How long blocks last: `seconds`, plus `incrementSeconds` per earlier block, at most
/// `maximumSeconds`.
public struct BlockSchedule: Hashable, Sendable, Codable {
    public var seconds: Int
    public var incrementSeconds: Int
    public var maximumSeconds: Int

    public static let `default` = BlockSchedule(seconds: 300, incrementSeconds: 0, maximumSeconds: 86_400)

    public init(seconds: Int, incrementSeconds: Int, maximumSeconds: Int) {
        self.seconds = seconds
        self.incrementSeconds = incrementSeconds
        self.maximumSeconds = maximumSeconds
    }

    /// The length of the block that follows `earlierBlocks` blocks.
    public func duration(afterEarlierBlocks earlierBlocks: Int) -> Int {
        let increment = incrementSeconds.multipliedReportingOverflow(by: max(0, earlierBlocks))
        let grown = seconds.addingReportingOverflow(increment.partialValue)
        let length = increment.overflow || grown.overflow ? Int.max : grown.partialValue
        return min(length, max(maximumSeconds, seconds))
    }
}

/// Server-trust settings of a rule.
public struct TrustSettings: Codable, Hashable, Sendable {
    /// Extra trust anchors, PEM.
    public var anchors: [String]?
    /// Whether the anchors of the service's machine count (default true).
    public var useSystemAnchors: Bool?
    /// SPKI SHA-256 pins, base64; one must match a certificate of the verified chain.
    public var pins: [String]?
    /// Accept a chain outside its validity dates (default false).
    public var allowExpired: Bool?

    public init(anchors: [String]? = nil, useSystemAnchors: Bool? = nil, pins: [String]? = nil, allowExpired: Bool? = nil) {
        self.anchors = anchors
        self.useSystemAnchors = useSystemAnchors
        self.pins = pins
        self.allowExpired = allowExpired
    }

    func validate(field: String) throws {
        guard (anchors?.count ?? 0) <= 100 else { throw CountersignError(.invalidPolicy, "\(field).anchors: at most 100") }
        for pin in pins ?? [] {
            guard Base64Text.decodedLength(pin) == 32 else {
                throw CountersignError(.invalidPolicy, "\(field).pins: '\(pin)' is not a base64 SHA-256 digest")
            }
        }
    }
}
