public import Foundation

/// Decides challenges. Pure: everything it needs comes in `DecisionInputs`, and the caller
/// records the plan (or refuses to answer when it cannot be recorded).
///
/// Lookup order for a challenge:
/// 0. a method Countersign does not know: `performDefaultHandling`, never an error
///    (`NSURLAuthenticationMethodDefault` over http(s) is HTTPBasic);
/// 1. the session's memory for the protection space, served without evaluating the policy:
///    a credential released with any persistence but `none` (`forSession`, `permanent`,
///    `synchronizable`), a credential the client submitted `forSession`, or the answer to a
///    session-wide challenge (ServerTrust, ClientCertificate, NTLM, Negotiate). It holds until
///    the session ends or the credential is rejected, deleted, or edited so that it no longer
///    fits the space (unless the rule that released it names it by id), and a trusted chain
///    until a certificate of its verified path expires; while the remembered
///    credential is blocked, the blocked disposition of the rule that released it answers;
/// 2. the first policy rule that matches; no rule: `performDefaultHandling`;
/// 3. for `useCredential`, the credential the rule names by id, else the fitting credentials
///    (of the rule's account, if it names one) in owner order: this session's (submitted
///    `forSession`), this client's (submitted `permanent`), the tenant's submitted by clients
///    (`synchronizable`), the tenant's provisioned by admins; among one owner the most
///    specific, then the most recently updated. Blocked credentials are skipped; if all that
///    fit are blocked, the rule's blocked disposition answers; if none fits, its failure
///    disposition.
/// `persistence: none` releases are remembered nowhere. Client-submitted `permanent` and
/// `synchronizable` credentials are served through step 3, so only where a rule answers
/// `useCredential`.
///
/// TLS challenges need OpenSSL, which the core does not have, so for them `useCredential`
/// yields a plan with a `pending` evaluation (see `DecisionEngine+TLS`): the caller evaluates
/// the server's chain or matches identities against the server's acceptable CAs, and
/// `resolve` turns the result into the answer.
public enum DecisionEngine {
    public static func decide(_ inputs: DecisionInputs) -> DecisionPlan {
        let space = inputs.challenge.protectionSpace.normalized
        let spaceKey = space.key
        var plan = decideFromMemoryOrPolicy(inputs, space: space, spaceKey: spaceKey)
        if plan.source != .session, inputs.sessionMemory[plan.memoryKey ?? spaceKey] != nil {
            // Decided past what the session remembers (an expired identity, say): the recorder
            // must not take the remembered answer for one written meanwhile.
            plan.passedOverMemory = true
        }
        return plan
    }

    private static func decideFromMemoryOrPolicy(_ inputs: DecisionInputs, space: ProtectionSpace, spaceKey: String) -> DecisionPlan {
        let method = space.method
        let scope: DecisionScope = method.isSessionWide ? .session : .task
        guard method.isKnown else {
            return DecisionPlan(
                disposition: .performDefaultHandling,
                scope: scope,
                source: .unsupportedMethod,
                reason: "Countersign does not answer \(method.rawValue)"
            )
        }
        let memoryKey = Self.memoryKey(spaceKey: spaceKey, method: method, inputs: inputs)
        if let remembered = inputs.sessionMemory[memoryKey], let plan = answer(from: remembered, for: space, scope: scope, inputs: inputs) {
            return plan
        }
        guard let rule = inputs.policy.rule(for: space) else {
            return DecisionPlan(
                disposition: .performDefaultHandling,
                scope: scope,
                source: .noMatchingRule,
                reason: "no policy rule matches this protection space",
                memoryKey: memoryKey == spaceKey ? nil : memoryKey
            )
        }
        let reference = RuleReference(id: rule.id, name: rule.name)
        let action = rule.then
        guard action.disposition == .useCredential else {
            return DecisionPlan(
                disposition: action.disposition,
                scope: scope,
                rule: reference,
                source: .policy,
                reason: "rule '\(rule.id)' answers \(action.disposition.rawValue)",
                rememberInSession: method.isSessionWide,
                memoryKey: memoryKey == spaceKey ? nil : memoryKey
            )
        }
        if method == .serverTrust {
            return serverTrustPlan(rule: rule, scope: scope, memoryKey: memoryKey)
        }
        if method == .clientCertificate {
            return identityPlan(rule: rule, scope: scope, inputs: inputs, memoryKey: memoryKey == spaceKey ? nil : memoryKey)
        }
        guard method.usesPassword else {
            // Every known method is answered above or with a password; kept for methods to come.
            return DecisionPlan(
                disposition: action.whenUnanswerable,
                scope: scope,
                rule: reference,
                source: .policy,
                reason: "rule '\(rule.id)' cannot release a password for \(method.rawValue)"
            )
        }
        let fitting = candidates(for: space, action: action, inputs: inputs)
        let candidates = inputs.releasesPassword ? fitting.filter(\.exportable) : fitting
        guard !candidates.isEmpty else {
            return DecisionPlan(
                disposition: action.whenUnanswerable,
                scope: scope,
                rule: reference,
                source: .policy,
                reason: fitting.isEmpty
                    ? "rule '\(rule.id)' found no credential for this protection space"
                    : "rule '\(rule.id)': \(keptIn(fitting[0]))"
            )
        }
        guard let credential = candidates.first(where: { !inputs.isBlocked($0.id) }) else {
            let until = candidates.compactMap { inputs.blockedUntil[$0.id] }.min()
            return DecisionPlan(
                disposition: action.whenBlocked,
                scope: scope,
                rule: reference,
                source: .policy,
                reason: "rule '\(rule.id)': the credential is blocked after too many rejections",
                blockedUntil: until,
                maxFailures: action.failureLimit,
                blockSchedule: action.blockSchedule
            )
        }
        let persistence = action.releasePersistence
        return DecisionPlan(
            disposition: .useCredential,
            credential: credential,
            persistence: persistence,
            scope: scope,
            rule: reference,
            source: .policy,
            reason: "rule '\(rule.id)' released the credential of '\(credential.attributes.account)'",
            maxFailures: action.failureLimit,
            blockSchedule: action.blockSchedule,
            blockedDisposition: action.whenBlocked,
            rememberInSession: persistence != .none
        )
    }

    /// The answer a session remembered, or `nil` when it no longer holds (its credential was
    /// deleted, or re-scoped away from `space`) and the policy must decide again.
    private static func answer(from remembered: SessionMemoryEntry, for space: ProtectionSpace, scope: DecisionScope, inputs: DecisionInputs) -> DecisionPlan? {
        let rule = remembered.ruleID.map { RuleReference(id: $0, name: remembered.ruleName) }
        guard remembered.disposition == .useCredential else {
            return DecisionPlan(
                disposition: remembered.disposition,
                scope: scope,
                rule: rule,
                source: .session,
                reason: "the session already answered this protection space"
            )
        }
        if let trust = remembered.trust {
            // Trusted when it was evaluated; once a certificate of the path has expired (valid
            // through its notAfter, as OpenSSL reads it), the policy evaluates the chain again.
            if let end = trust.validUntil, inputs.now > end { return nil }
            return DecisionPlan(
                disposition: .useCredential,
                persistence: remembered.persistence,
                scope: scope,
                rule: rule,
                source: .session,
                reason: "the session already trusted this certificate chain for this host and port",
                trust: trust
            )
        }
        guard let id = remembered.credentialID, let credential = inputs.credentials.credential(id: id) else { return nil }
        if credential.kind == .password, !stillAnswers(credential, space, releasedBy: remembered.ruleID, policy: inputs.policy) {
            return nil
        }
        if credential.kind == .password, !credential.exportable, inputs.releasesPassword {
            // Not here, where the password would leave; the memory still serves the Digest
            // answers of raw responses.
            return DecisionPlan(
                disposition: inputs.policy.rule(for: space)?.then.whenUnanswerable ?? .cancelAuthenticationChallenge,
                scope: scope,
                rule: rule,
                source: .session,
                reason: keptIn(credential)
            )
        }
        if credential.kind == .clientIdentity, credential.certificate?.isValid(at: inputs.now) != true {
            // Expired identities are never released; the policy decides again.
            return nil
        }
        // The limit in force now, as a rejection counts against it (`Policy.rejectionLimits`); a
        // credential the client submitted was remembered without one.
        let limits = inputs.policy.rejectionLimits(for: space, releasing: (credential.id, credential.attributes.account))
        let maxFailures = limits?.maxFailures ?? remembered.maxFailures
        let blockSchedule = limits?.schedule ?? remembered.blockSchedule
        if inputs.isBlocked(id) {
            return DecisionPlan(
                disposition: remembered.blockedDisposition ?? .cancelAuthenticationChallenge,
                scope: scope,
                rule: rule,
                source: .session,
                reason: "the credential the session remembered is blocked",
                blockedUntil: inputs.blockedUntil[id],
                maxFailures: maxFailures,
                blockSchedule: blockSchedule
            )
        }
        return DecisionPlan(
            disposition: .useCredential,
            credential: credential,
            persistence: remembered.persistence,
            scope: scope,
            rule: rule,
            source: .session,
            reason: credential.kind == .clientIdentity
                ? "the session remembered the client identity '\(credential.attributes.account)'"
                : "the session remembered the credential of '\(credential.attributes.account)'",
            maxFailures: maxFailures,
            blockSchedule: blockSchedule
        )
    }

    /// Why an unexportable credential is not released where its password would leave.
    private static func keptIn(_ credential: Credential) -> String {
        "the password of '\(credential.attributes.account)' never leaves the service: only a Digest challenge of a raw response "
            + "(POST /v1/sessions/{id}/responses) is answered with it"
    }

    /// Whether a remembered password may still answer `space` after an admin edited it: as in
    /// step 3, it must fit the space unless the rule that released it names it by id, and a
    /// proxy's credential never answers an origin server (nor the other way round).
    private static func stillAnswers(_ credential: Credential, _ space: ProtectionSpace, releasedBy ruleID: String?, policy: Policy) -> Bool {
        guard credential.attributes.isProxy == space.isProxy else { return false }
        if credential.attributes.fits(space) { return true }
        let rule = ruleID.flatMap { id in policy.rules.first { $0.id == id } }
        return rule?.then.credentialId?.lowercased() == credential.id.text
    }

    private static func candidates(for space: ProtectionSpace, action: RuleAction, inputs: DecisionInputs) -> [Credential] {
        if let id = action.credentialId?.lowercased() {
            guard let named = UUID(text: id).flatMap(inputs.credentials.credential(id:)) else { return [] }
            return named.kind == .password && named.attributes.isProxy == space.isProxy ? [named] : []
        }
        return inputs.credentials.candidates(host: space.host)
            .filter { credential in
                guard credential.kind == .password, credential.attributes.fits(space) else { return false }
                if let account = action.account, credential.attributes.account != account { return false }
                switch credential.owner {
                case .session(let id, _): return id == inputs.sessionID
                case .client(let clientID): return ClientIdentifier.same(clientID, inputs.clientID)
                case .tenant: return true
                }
            }
            .sorted { lhs, rhs in
                if lhs.owner.precedence != rhs.owner.precedence { return lhs.owner.precedence < rhs.owner.precedence }
                if lhs.attributes.specificity != rhs.attributes.specificity { return lhs.attributes.specificity > rhs.attributes.specificity }
                if lhs.updatedAt != rhs.updatedAt { return lhs.updatedAt > rhs.updatedAt }
                return lhs.id.text < rhs.id.text
            }
    }
}

/// Everything the engine reads to decide one challenge.
public struct DecisionInputs: Sendable {
    public var challenge: Challenge
    public var policy: Policy
    public var sessionID: UUID
    public var clientID: String
    /// The session's remembered answers, by protection-space key.
    public var sessionMemory: [String: SessionMemoryEntry]
    /// The credentials of the tenant this session may see.
    public var credentials: DecisionCredentials
    /// Credentials blocked now, and until when.
    public var blockedUntil: [UUID: Date]
    public var now: Date
    /// For server-trust challenges that carry a chain: its digest (`PresentedChain.digest`),
    /// which keys what the session remembers, so that another chain is evaluated again.
    public var presentedChainDigest: String?
    /// For client-certificate challenges that name acceptable CAs: a digest of them
    /// (`PresentedTLS.acceptableIssuersDigest`), which keys what the session remembers, so that
    /// a server naming other CAs is answered again rather than given an identity it refuses.
    public var acceptableIssuersDigest: String?
    /// Whether a password released goes to the client (false only for a Digest header of a raw
    /// response, which the service computes): an unexportable credential answers only then.
    public var releasesPassword: Bool

    public init(
        challenge: Challenge,
        policy: Policy,
        sessionID: UUID,
        clientID: String,
        sessionMemory: [String: SessionMemoryEntry],
        credentials: DecisionCredentials,
        blockedUntil: [UUID: Date],
        now: Date,
        presentedChainDigest: String? = nil,
        acceptableIssuersDigest: String? = nil,
        releasesPassword: Bool = true
    ) {
        self.challenge = challenge
        self.policy = policy
        self.sessionID = sessionID
        self.clientID = clientID
        self.sessionMemory = sessionMemory
        self.credentials = credentials
        self.blockedUntil = blockedUntil
        self.now = now
        self.presentedChainDigest = presentedChainDigest
        self.acceptableIssuersDigest = acceptableIssuersDigest
        self.releasesPassword = releasesPassword
    }

    func isBlocked(_ id: UUID) -> Bool {
        guard let until = blockedUntil[id] else { return false }
        return until > now
    }
}
