/// Chooses how to answer a raw 401/407: every challenge goes through
/// ``AuthenticationChallengeSelector`` with the tenant's preference order, and a challenge "has a
/// credential" when the decision engine, asked about that challenge's protection space, would
/// release one (policy rule, session memory, blocks and all). The strongest such challenge is
/// answered.
///
/// When none can be, the answer is the engine's plan for the most preferred challenge that
/// reached the lookup (so that a blocked credential answers with the rule's blocked
/// disposition, and a rule that rejects the space rejects it); when no challenge reached it,
/// `performDefaultHandling`. Pure: the engine is passed in.
public enum ResponseDecider {
    /// - Parameters:
    ///   - response: the validated response; it must carry challenges (not a 403).
    ///   - policy: the tenant's policy (its preference order and rules).
    ///   - decide: the decision engine for one protection space.
    ///   - canAnswer: whether this process can compute a mechanism's answer (a Digest hash its
    ///     crypto library lacks cannot be); the others are as if not in the preference order.
    /// - Throws: when every challenge is malformed, the first one's code (such as
    ///   `missing_challenge_parameter`): the server's response cannot be answered at all.
    public static func plan(
        _ response: RawResponseContext,
        policy: Policy,
        canAnswer: (AuthenticationMechanism) -> Bool = { _ in true },
        decide: (ProtectionSpace) -> DecisionPlan
    ) throws(CountersignError) -> ResponsePlan {
        let preference = policy.settings.schemePreference.filter(canAnswer)
        var plans: [String: DecisionPlan] = [:]
        let selection = AuthenticationChallengeSelector(preference: preference).select(
            from: response.challenges,
            canHashEntityBody: { response.entityBody?.hashes(under: $0) ?? false }
        ) { scheme, realm in
            let space = response.protectionSpace(scheme: scheme, realm: realm)
            let plan = plans[space.key] ?? decide(space)
            plans[space.key] = plan
            return plan.disposition == .useCredential && plan.credential != nil
        }

        if selection.isEveryChallengeMalformed, let first = selection.assessments.first, case .malformed(let code) = first.status {
            throw CountersignError(code, "no challenge can be answered: \(first.reason)")
        }

        func space(of assessment: AuthenticationChallengeAssessment) -> ProtectionSpace {
            response.protectionSpace(scheme: assessment.challenge.scheme, realm: assessment.digest?.realm ?? assessment.challenge.realm)
        }

        if let chosen = selection.chosen {
            let chosenSpace = space(of: chosen)
            let plan = plans[chosenSpace.key]!
            let code: ResponseReasonCode =
                switch chosen.mechanism {
                case .some(.ntlm): .ntlmHandshake
                case .some(.digest) where chosen.digest?.isStale == true: .staleNonce
                default: .authorization
                }
            return ResponsePlan(selection: selection, space: chosenSpace, plan: plan, reasonCode: code, plansBySpaceKey: plans)
        }

        // The challenges that reached the lookup, most preferred first (server order on ties).
        let looked = selection.assessments
            .filter { $0.status == .noCredential }
            .compactMap { assessment in assessment.mechanism.flatMap { preference.firstIndex(of: $0) }.map { (assessment, $0) } }
            .sorted { $0.1 < $1.1 }
        if let (assessment, _) = looked.first {
            let lookedSpace = space(of: assessment)
            let plan = plans[lookedSpace.key]!
            return ResponsePlan(
                selection: selection,
                space: lookedSpace,
                plan: plan,
                reasonCode: reasonCode(for: plan, policy: policy),
                plansBySpaceKey: plans
            )
        }

        let first = selection.assessments[0]
        let unsupported = selection.assessments.map { "\($0.challenge.scheme.name): \($0.reason)" }.joined(separator: "; ")
        let plan = DecisionPlan(
            disposition: .performDefaultHandling,
            scope: RawResponseContext.method(for: first.challenge.scheme).isSessionWide ? .session : .task,
            source: .unsupportedMethod,
            reason: "no challenge Countersign can answer (\(unsupported.prefix(400)))"
        )
        return ResponsePlan(selection: selection, space: space(of: first), plan: plan, reasonCode: .noSupportedChallenge, plansBySpaceKey: plans)
    }

    /// The answer to a 403 that followed a credential released for `space` under `rule`: stop
    /// (`cancelAuthenticationChallenge`, `server_refused`). The server took the credential and
    /// refuses anyway; sending it again, or another one, will not change its mind.
    public static func refusal(space: ProtectionSpace, rule: RuleReference?) -> ResponsePlan {
        let plan = DecisionPlan(
            disposition: .cancelAuthenticationChallenge,
            scope: .task,
            rule: rule,
            source: .serverResponse,
            reason: "the server refused the request (403) after the credential was sent; retrying will not help"
        )
        return ResponsePlan(
            selection: AuthenticationChallengeSelection(assessments: []),
            space: space,
            plan: plan,
            reasonCode: .serverRefused,
            plansBySpaceKey: [:]
        )
    }

    /// The code of a plan that does not release a credential.
    static func reasonCode(for plan: DecisionPlan, policy: Policy) -> ResponseReasonCode {
        if plan.blockedUntil != nil { return .credentialBlocked }
        switch plan.source {
        case .noMatchingRule: return .noMatchingRule
        case .unsupportedMethod: return .noSupportedChallenge
        case .session, .policy, .serverResponse:
            let ruleReleases = plan.rule.flatMap { reference in policy.rules.first { $0.id == reference.id } }?.then.disposition == .useCredential
            return ruleReleases && plan.source == .policy ? .noCredential : .policy
        }
    }
}
