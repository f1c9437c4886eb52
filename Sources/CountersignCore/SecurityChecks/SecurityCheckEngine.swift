import Foundation

/// Decides how one security check of a challenge list is answered. Pure: the caller loads the
/// handler, the client's state and the credential's counter, and records the plan.
///
/// In order: no handler, `unhandled` (the client's own handler answers); a `cancel` handler,
/// `cancel`; a blocked client or a blocked credential, `cancel`; no attempt left (by the
/// server's `remainingAttempts` or the central count), `cancel`; the last attempt (the server
/// says one remains, or the central count has one left of several) and the stored credential
/// already rejected since its last success or change, `cancel` (the last attempt is never
/// burned with a credential known bad); else `submitChallengeAnswer`.
public enum SecurityCheckEngine {
    public static func decide(_ inputs: SecurityCheckInputs) -> SecurityCheckPlan {
        let name = inputs.name
        guard let handler = inputs.handler else {
            return SecurityCheckPlan(
                action: .unhandled,
                decision: DecisionPlan(
                    disposition: .performDefaultHandling,
                    scope: .task,
                    source: .noMatchingRule,
                    reason: "no handler answers security check '\(name)'; the client's own handler does"
                )
            )
        }
        let rule = RuleReference(id: name, name: nil)
        guard handler.action == .submitChallengeAnswer else {
            return cancel(rule, "the handler of '\(name)' cancels it")
        }
        let limits = handler.limits
        let now = inputs.now
        if let state = inputs.state, state.isBlocked(at: now) {
            return cancel(
                rule,
                "this client is blocked for '\(name)' after \(state.attempts) failed attempts",
                blockedUntil: state.expiresAt,
                remainingAttempts: 0,
                state: .blocked
            )
        }
        let state = inputs.state?.name(at: now)
        guard let credential = inputs.credential else {
            return cancel(rule, "the credential of the handler of '\(name)' is gone", state: state)
        }
        if let until = inputs.credentialBlockedUntil, until > now {
            return cancel(
                rule,
                "the credential of '\(credential.attributes.account)' is blocked after too many rejections",
                blockedUntil: until,
                maxFailures: limits.maxFailures,
                remainingAttempts: 0,
                state: state
            )
        }
        let template = handler.answer.map(SecurityCheckAnswerTemplate.init)
        if !credential.exportable, template?.usesSecret == true {
            return cancel(rule, "the password of '\(credential.attributes.account)' never leaves the service: the handler of '\(name)' cannot answer with it", state: state)
        }
        let central = inputs.state?.remainingAttempts(at: now, limits: limits) ?? limits.maxAttempts
        let server = SecurityCheckChallenges.remainingAttempts(in: inputs.challenge)
        let remaining = min(central, server ?? central)
        guard remaining > 0 else {
            return cancel(rule, "no attempt remains for '\(name)'", remainingAttempts: 0, state: state)
        }
        // A window's first attempt is not its last only because `maxAttempts` is 1 (the default):
        // read so, one rejection would withhold the credential for good, whatever the expiry of
        // its block, with its counter showing it unblocked.
        let lastAttempt = remaining == 1 && (server == 1 || central < limits.maxAttempts)
        if lastAttempt, inputs.credentialFailures > 0 {
            return cancel(
                rule,
                "one attempt remains for '\(name)' and the credential of '\(credential.attributes.account)' was already rejected "
                    + "\(inputs.credentialFailures) time(s) since its last success or change: the last attempt is not burned with it",
                maxFailures: limits.maxFailures,
                remainingAttempts: remaining,
                state: state
            )
        }
        return SecurityCheckPlan(
            action: .submitChallengeAnswer,
            decision: DecisionPlan(
                disposition: .useCredential,
                credential: credential,
                persistence: handler.releasePersistence,
                scope: .task,
                rule: rule,
                source: .policy,
                reason: "the handler of '\(name)' answered with the credential of '\(credential.attributes.account)'",
                maxFailures: limits.maxFailures,
                blockSchedule: limits.blockSchedule,
                blockedDisposition: .cancelAuthenticationChallenge
            ),
            remainingAttempts: remaining,
            state: state,
            template: template
        )
    }

    private static func cancel(
        _ rule: RuleReference,
        _ reason: String,
        blockedUntil: Date? = nil,
        maxFailures: Int? = nil,
        remainingAttempts: Int? = nil,
        state: SecurityCheckState.Name? = nil
    ) -> SecurityCheckPlan {
        SecurityCheckPlan(
            action: .cancel,
            decision: DecisionPlan(
                disposition: .cancelAuthenticationChallenge,
                scope: .task,
                rule: rule,
                source: .policy,
                reason: reason,
                blockedUntil: blockedUntil,
                maxFailures: maxFailures
            ),
            remainingAttempts: remainingAttempts,
            state: state
        )
    }

    /// The protection space security-check decisions and counters are recorded under: one per
    /// check name, apart from every HTTP space (protocol `securitycheck`, host
    /// `securitycheck.local`, port 0, the check name as realm, method `SecurityCheck`).
    public static func protectionSpace(for name: String) -> ProtectionSpace {
        ProtectionSpace(
            host: "securitycheck.local",
            port: 0,
            protocolName: "securitycheck",
            realm: name,
            authenticationMethod: AuthenticationMethod(rawValue: "SecurityCheck")
        )
    }

    /// The decision record kind of security-check answers.
    public static let decisionKind = "securityCheck"
}
