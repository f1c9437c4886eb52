import Foundation

/// The TLS challenges. For `useCredential` the engine cannot finish alone: judging a chain
/// and comparing CA names take OpenSSL. It returns a plan with a `pending` evaluation, and
/// `resolve` finishes it with the evaluator's result, so the policy's logic (failure and
/// blocked dispositions, persistence, limits) stays here.
///
/// Server trust (`NSURLAuthenticationMethodServerTrust`): the chain is evaluated under the
/// rule's `trust` settings. Trusted: `useCredential` with the evaluation, remembered by the
/// session for this host, port and chain (`memoryKey`). Not trusted: the rule's failure
/// disposition, with the evaluation saying which check failed; not remembered, so a fixed
/// server is evaluated again.
///
/// Client certificates (`NSURLAuthenticationMethodClientCertificate`): the identity the rule
/// names (`identityId`), else the tenant's identities (those whose subject is the rule's
/// `account`, when it names one; none when it names a password by `credentialId`), those valid
/// longest first. Identities
/// outside their validity period are never candidates. Of the candidates, those whose chain
/// has an issuer among the server's acceptable CAs (all of them when the server names none, or
/// when the rule named the identity) fit; the first that is not blocked is released with the
/// rule's persistence. None fits: the failure disposition; all that fit are blocked: the
/// blocked disposition.
extension DecisionEngine {
    /// The session-memory key of a challenge: the protection space's key, plus the presented
    /// chain's digest for server trust.
    static func memoryKey(spaceKey: String, method: AuthenticationMethod, inputs: DecisionInputs) -> String {
        switch method {
        case .serverTrust: inputs.presentedChainDigest.map { spaceKey + "|" + $0 } ?? spaceKey
        case .clientCertificate: inputs.acceptableIssuersDigest.map { spaceKey + "|issuers:" + $0 } ?? spaceKey
        default: spaceKey
        }
    }

    static func serverTrustPlan(rule: PolicyRule, scope: DecisionScope, memoryKey: String) -> DecisionPlan {
        DecisionPlan(
            disposition: .useCredential,
            persistence: rule.then.releasePersistence,
            scope: scope,
            rule: RuleReference(id: rule.id, name: rule.name),
            source: .policy,
            reason: "rule '\(rule.id)' evaluates the server's certificate chain",
            pending: .serverTrust(settings: rule.then.trust ?? TrustSettings(), action: rule.then),
            memoryKey: memoryKey
        )
    }

    static func identityPlan(rule: PolicyRule, scope: DecisionScope, inputs: DecisionInputs, memoryKey: String?) -> DecisionPlan {
        let action = rule.then
        let reference = RuleReference(id: rule.id, name: rule.name)
        let identities = inputs.credentials.filter { credential in
            guard credential.kind == .clientIdentity, credential.certificate != nil, case .tenant = credential.owner else { return false }
            return true
        }
        let named = action.identityId?.lowercased()
        // A rule without `methods` also matches client-certificate challenges: one that names a
        // password (`credentialId`) or an account says which credential it releases, and a private
        // key it does not name must not go to whichever of its hosts asks for a certificate. Nor
        // does one that names nothing (a rule written for passwords, say): an identity it does not
        // name goes only where the rule lists client certificates among its methods.
        let namesPassword = named == nil && action.credentialId != nil
        let account = named == nil ? action.account : nil
        let listsClientCertificates = rule.match.methods?.contains(.clientCertificate) == true
        let candidates: [Credential]
        if let named {
            candidates = identities.filter { $0.id.text == named }
        } else if namesPassword || (account == nil && !listsClientCertificates) {
            candidates = []
        } else {
            candidates = identities
                // An identity's account is its leaf's subject.
                .filter { account == nil || $0.attributes.account == account }
                .sorted { lhs, rhs in
                    let left = lhs.certificate!, right = rhs.certificate!
                    if left.notAfter != right.notAfter { return left.notAfter > right.notAfter }
                    if lhs.createdAt != rhs.createdAt { return lhs.createdAt < rhs.createdAt }
                    return lhs.id.text < rhs.id.text
                }
        }
        let valid = candidates.filter { $0.certificate!.isValid(at: inputs.now) }
        guard !valid.isEmpty else {
            let why: String
            if namesPassword {
                why = "it names a password credential, not a client identity"
            } else if named == nil, account == nil, !listsClientCertificates {
                why = "it names no client identity, and does not list client certificates among its methods"
            } else if named != nil {
                why = candidates.isEmpty ? "the client identity it names does not exist" : "the client identity it names is expired or not yet valid"
            } else if let account {
                why = candidates.isEmpty ? "no client identity has the subject '\(account)'" : "every client identity with the subject '\(account)' is expired or not yet valid"
            } else {
                why = candidates.isEmpty ? "the tenant has no client identity" : "every client identity is expired or not yet valid"
            }
            return DecisionPlan(
                disposition: action.whenUnanswerable,
                scope: scope,
                rule: reference,
                source: .policy,
                reason: "rule '\(rule.id)': \(why)",
                memoryKey: memoryKey
            )
        }
        return DecisionPlan(
            disposition: .useCredential,
            persistence: action.releasePersistence,
            scope: scope,
            rule: reference,
            source: .policy,
            reason: "rule '\(rule.id)' selects a client identity",
            pending: .identitySelection(candidates: valid, explicit: named != nil, action: action),
            memoryKey: memoryKey
        )
    }

    /// Finishes a plan pending `.serverTrust` with the evaluation of the presented chain.
    /// Any other plan is returned as it is.
    public static func resolve(_ plan: DecisionPlan, trust verdict: ServerTrustVerdict) -> DecisionPlan {
        guard case .serverTrust(_, let action) = plan.pending else { return plan }
        let ruleID = plan.rule?.id ?? ""
        var resolved = plan
        resolved.pending = nil
        resolved.trust = verdict
        if verdict.trusted {
            resolved.disposition = .useCredential
            resolved.persistence = action.releasePersistence
            resolved.rememberInSession = action.releasePersistence != .none
            resolved.reason = "rule '\(ruleID)' trusts the server's certificate chain" + (verdict.matchedPin == nil ? "" : " (a pin matched)")
        } else {
            resolved.disposition = action.whenUnanswerable
            resolved.persistence = .none
            resolved.rememberInSession = false
            resolved.reason = "rule '\(ruleID)': the server's certificate chain is not trusted (\(verdict.failure?.code ?? "invalid_chain"))"
        }
        return resolved
    }

    /// Finishes a plan pending `.identitySelection` with the candidates that fit the server's
    /// acceptable CAs, in the candidates' order. Any other plan is returned as it is.
    public static func resolve(_ plan: DecisionPlan, identities fitting: [Credential], inputs: DecisionInputs) -> DecisionPlan {
        var resolved = selectIdentity(plan, identities: fitting, inputs: inputs)
        resolved.passedOverMemory = plan.passedOverMemory
        return resolved
    }

    private static func selectIdentity(_ plan: DecisionPlan, identities fitting: [Credential], inputs: DecisionInputs) -> DecisionPlan {
        guard case .identitySelection(_, _, let action) = plan.pending else { return plan }
        let ruleID = plan.rule?.id ?? ""
        guard !fitting.isEmpty else {
            return DecisionPlan(
                disposition: action.whenUnanswerable,
                scope: plan.scope,
                rule: plan.rule,
                source: plan.source,
                reason: "rule '\(ruleID)': no valid client identity has an issuer the server accepts",
                memoryKey: plan.memoryKey
            )
        }
        guard let identity = fitting.first(where: { !inputs.isBlocked($0.id) }) else {
            return DecisionPlan(
                disposition: action.whenBlocked,
                scope: plan.scope,
                rule: plan.rule,
                source: plan.source,
                reason: "rule '\(ruleID)': the client identity is blocked after too many rejections",
                blockedUntil: fitting.compactMap { inputs.blockedUntil[$0.id] }.min(),
                maxFailures: action.failureLimit,
                blockSchedule: action.blockSchedule,
                memoryKey: plan.memoryKey
            )
        }
        let persistence = action.releasePersistence
        return DecisionPlan(
            disposition: .useCredential,
            credential: identity,
            persistence: persistence,
            scope: plan.scope,
            rule: plan.rule,
            source: plan.source,
            reason: "rule '\(ruleID)' released the client identity '\(identity.certificate?.subject ?? identity.attributes.account)'",
            maxFailures: action.failureLimit,
            blockSchedule: action.blockSchedule,
            blockedDisposition: action.whenBlocked,
            rememberInSession: persistence != .none,
            memoryKey: plan.memoryKey
        )
    }
}
