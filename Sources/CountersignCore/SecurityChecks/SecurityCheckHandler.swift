/// How the tenant answers one MobileFirst-style security check, centrally: part of the policy
/// and versioned with it.
///
/// ```json
/// {"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer",
///  "credentialId": "…", "answer": {"pin": "$secret"},
///  "maxAttempts": 3, "attemptingStateExpirationSec": 120,
///  "successStateExpirationSec": 3600, "blockedStateExpirationSec": 60}
/// ```
///
/// Attempts are counted in MobileFirst's own terms (`CredentialsValidationSecurityCheck`), per
/// tenant, check and client: `maxAttempts` failed answers within the attempting window block
/// the client for `blockedStateExpirationSec`; a success holds for `successStateExpirationSec`.
/// The credential's own rejections are counted as any credential's (fleet-wide, in the
/// counters), and it blocks after `maxFailures` for `blockSeconds`.
public struct SecurityCheckHandler: Codable, Hashable, Sendable {
    /// The check this handler answers, as the server names it.
    public var securityCheck: String
    public var action: SecurityCheckAction
    /// The tenant credential whose fields fill the answer (`submitChallengeAnswer`).
    public var credentialId: UUIDString?
    /// The answer object (`submitChallengeAnswer`), see `SecurityCheckAnswerTemplate`.
    public var answer: [String: JSONValue]?
    /// How long the client may keep the answer: `none` (this challenge only, the default) or
    /// `forSession`.
    public var persistence: Persistence?
    /// Failed answers within the attempting window before the client is blocked (default 1, as
    /// MobileFirst).
    public var maxAttempts: Int?
    /// How long the attempting state lasts after a challenge or a failure (default 120 s).
    public var attemptingStateExpirationSec: Int?
    /// How long a success holds (default 3600 s).
    public var successStateExpirationSec: Int?
    /// How long a client stays blocked after `maxAttempts` failures (default 0: never blocked,
    /// as MobileFirst).
    public var blockedStateExpirationSec: Int?
    /// Consecutive rejections of the credential, across all clients, before it is blocked
    /// (default `maxAttempts`).
    public var maxFailures: Int?
    /// How long a blocked credential stays blocked (default `blockedStateExpirationSec`, or 300 s
    /// when that is 0).
    public var blockSeconds: Int?

    public init(
        securityCheck: String,
        action: SecurityCheckAction,
        credentialId: UUIDString? = nil,
        answer: [String: JSONValue]? = nil,
        persistence: Persistence? = nil,
        maxAttempts: Int? = nil,
        attemptingStateExpirationSec: Int? = nil,
        successStateExpirationSec: Int? = nil,
        blockedStateExpirationSec: Int? = nil,
        maxFailures: Int? = nil,
        blockSeconds: Int? = nil
    ) {
        self.securityCheck = securityCheck
        self.action = action
        self.credentialId = credentialId
        self.answer = answer
        self.persistence = persistence
        self.maxAttempts = maxAttempts
        self.attemptingStateExpirationSec = attemptingStateExpirationSec
        self.successStateExpirationSec = successStateExpirationSec
        self.blockedStateExpirationSec = blockedStateExpirationSec
        self.maxFailures = maxFailures
        self.blockSeconds = blockSeconds
    }

    /// The attempt rules with their defaults filled in.
    public var limits: SecurityCheckLimits {
        let blocked = blockedStateExpirationSec ?? 0
        let attempts = maxAttempts ?? 1
        return SecurityCheckLimits(
            maxAttempts: attempts,
            attemptingStateExpirationSec: attemptingStateExpirationSec ?? 120,
            successStateExpirationSec: successStateExpirationSec ?? 3600,
            blockedStateExpirationSec: blocked,
            maxFailures: maxFailures ?? attempts,
            blockSeconds: blockSeconds ?? (blocked > 0 ? blocked : BlockSchedule.default.seconds)
        )
    }

    public var releasePersistence: Persistence { persistence ?? .none }

    /// The persistences an answer may be released with: the client keeps an answer object for
    /// one challenge or for its session, never beyond.
    public static let allowedPersistences: [Persistence] = [.none, .forSession]

    var references: [CredentialReference] {
        credentialId.map { [.credential($0.lowercased())] } ?? []
    }

    func validate(field: String) throws {
        guard SecurityCheckName.isValid(securityCheck) else {
            throw CountersignError(.invalidPolicy, "\(field).securityCheck must be \(SecurityCheckName.rule)")
        }
        switch action {
        case .submitChallengeAnswer:
            guard let credentialId else {
                throw CountersignError(.invalidPolicy, "\(field): submitChallengeAnswer needs the credentialId whose fields fill the answer")
            }
            guard UUIDText.isValid(credentialId) else {
                throw CountersignError(.invalidPolicy, "\(field).credentialId must be a UUID")
            }
            guard let answer else {
                throw CountersignError(.invalidPolicy, "\(field): submitChallengeAnswer needs an answer object, e.g. {\"pin\": \"$secret\"}")
            }
            try SecurityCheckAnswerTemplate(answer).validate(field: "\(field).answer")
            if let persistence, !Self.allowedPersistences.contains(persistence) {
                throw CountersignError(.invalidPolicy, "\(field).persistence must be none or forSession: an answer is kept for one challenge or one session")
            }
        case .cancel:
            guard credentialId == nil, answer == nil, persistence == nil else {
                throw CountersignError(.invalidPolicy, "\(field): a cancel handler answers nothing, so it takes no credentialId, answer or persistence")
            }
        }
        if let maxAttempts { try Validation.range(maxAttempts, 1...1_000, field: "\(field).maxAttempts") }
        if let value = attemptingStateExpirationSec { try Validation.range(value, 1...31_536_000, field: "\(field).attemptingStateExpirationSec") }
        if let value = successStateExpirationSec { try Validation.range(value, 1...31_536_000, field: "\(field).successStateExpirationSec") }
        if let value = blockedStateExpirationSec { try Validation.range(value, 0...31_536_000, field: "\(field).blockedStateExpirationSec") }
        if let maxFailures { try Validation.range(maxFailures, 1...10_000, field: "\(field).maxFailures") }
        if let blockSeconds { try Validation.range(blockSeconds, 1...31_536_000, field: "\(field).blockSeconds") }
    }
}
