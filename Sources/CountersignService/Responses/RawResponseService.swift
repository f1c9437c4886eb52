public import CountersignCore
import CountersignCrypto
public import CountersignStorage
import Foundation

/// Answers raw 401/407/403 responses forwarded by clients that do not parse challenges: parses
/// every challenge, lets the tenant's policy and preference order pick the one to answer, and
/// returns the ready `Authorization` / `Proxy-Authorization` header, so that a Digest password
/// never leaves the service.
///
/// Decisions go through ``DecisionService`` (same policy, credentials, session memory, records
/// and rejection counting as forwarded challenges). What this adds:
/// - a second 401/407 for the task that the latest header was issued to counts as that
///   decision's rejection (outcome source `response`), unless a Digest challenge of its realm says
///   `stale=true` (the nonce expired, the credential was fine) or, once per attempt, an `NTLM`
///   challenge carries the server's CHALLENGE message (the handshake goes on);
/// - a 403 after a released credential records that decision's outcome as `refused` (not a
///   rejection) and answers `cancelAuthenticationChallenge` with `server_refused`;
/// - Digest nonce counts come from ``DigestNonceCountStore`` and cnonces from ``SecureRandom``.
public struct RawResponseService: Sendable {
    let decisions: DecisionService
    let store: DecisionStore
    let nonceCounts: DigestNonceCountStore
    let parser: AuthenticationChallengeParser
    let responder = DigestResponder { algorithm, bytes in Digest.hash(hashAlgorithm(of: algorithm), bytes) }

    /// Digest answers only with the hashes OpenSSL computes here; the other mechanisms need none.
    static func canAnswer(_ mechanism: AuthenticationMechanism) -> Bool {
        guard case .digest(let algorithm) = mechanism else { return true }
        return Digest.isAvailable(hashAlgorithm(of: algorithm))
    }

    public init(
        decisions: DecisionService,
        store: DecisionStore,
        nonceCounts: DigestNonceCountStore,
        parser: AuthenticationChallengeParser = AuthenticationChallengeParser()
    ) {
        self.decisions = decisions
        self.store = store
        self.nonceCounts = nonceCounts
        self.parser = parser
    }

    /// What the answer will be built from once the decision is recorded.
    enum Prepared: Sendable, CustomStringConvertible, CustomReflectable {
        case none
        /// The whole header value: the password, in base64.
        case basic(headerValue: String)
        case digest(DigestChallenge, credentialID: UUID)
        case ntlm

        var description: String {
            switch self {
            case .none: "none"
            case .basic: "basic(headerValue: redacted)"
            case .digest(_, let credentialID): "digest(credentialID: \(credentialID))"
            case .ntlm: "ntlm"
            }
        }

        var customMirror: Mirror { Mirror(self, children: ["answer": description], displayStyle: .enum) }
    }

    public func answer(_ response: RawResponse, for asker: DecisionService.Asker) async throws -> ResponseAnswer {
        let context = try response.validated(parser: parser)
        // The response reports the outcome of an earlier decision, which a session ended with
        // `finishTasks` (or by expiry) still takes; recording the answer to it then fails as any
        // new decision would, with `session_invalidated`.
        try await decisions.session(of: asker)
        if context.status == 403 {
            return try await refusal(context, for: asker)
        }

        let earlier = try await earlierRelease(context, sessionID: asker.sessionID)
        var countedRejection: UUID?
        var failureCount = 0
        var continued: DecisionEntry?
        if let earlier {
            try await decisions.checkAnswering(asker)
            // A release cancelled before its header was sent (see the Digest answer below) failed
            // nothing: the attempt it began goes on at its failure count.
            failureCount = earlier.previousFailureCount + (earlier.outcome == .cancelled ? 0 : 1)
            if earlier.outcome == nil {
                if try await continuesAttempt(earlier, in: context) {
                    guard try await store.claimContinuation(of: earlier) else {
                        throw CountersignError.attemptAlreadyContinued(taskID: context.taskId, decisionID: earlier.id)
                    }
                    continued = earlier
                    failureCount = earlier.previousFailureCount
                } else {
                    try await checkAnswerable(context, failureCount: failureCount, for: asker)
                    if let result = try await decisions.recordOutcome(
                        .rejected,
                        upstreamStatus: context.status,
                        of: earlier.id,
                        tenantID: asker.tenantID,
                        source: "response"
                    ), result.counted {
                        countedRejection = earlier.id
                    }
                }
            }
        }

        // The answer is built under the claim too: a Digest header whose nonce count cannot be
        // taken fails the request (503, retry) after the decision was recorded, and the same
        // response forwarded again must still find its release to continue.
        let (decision, planned, authorization, credential) = try await abandoningClaim(on: continued) {
            let (decision, planned, prepared) = try await decisions.decideAndRecord(
                taskID: context.taskId,
                kind: "response",
                previousFailureCount: failureCount,
                for: asker,
                plan: { state in try Self.plan(context, from: state, failureCount: failureCount) },
                prepare: { planned, released in try prepare(planned, released: released, context: context) }
            )
            var authorization: ResponseAnswer.HeaderField?
            var credential: ReleasedCredential?
            switch prepared {
            case .none:
                break
            case .basic(let headerValue):
                authorization = .init(name: context.authorizationFieldName, value: headerValue)
            case .ntlm:
                credential = decision.released
            case .digest(let challenge, let credentialID):
                guard let released = decision.released else { break }
                do {
                    authorization = .init(
                        name: context.authorizationFieldName,
                        value: try await digestHeader(challenge, credentialID: credentialID, released: released, tenantID: asker.tenantID, context: context)
                    )
                } catch {
                    // The release is recorded, but no header reaches the client: left without an
                    // outcome, the same response forwarded again (as the 503 invites) would find
                    // it the task's last release and count it as rejected, though nothing was sent.
                    _ = try? await uncancelled { [decisions] in
                        try await decisions.recordOutcome(.cancelled, upstreamStatus: nil, of: decision.id, tenantID: asker.tenantID, source: "unsent")
                    }
                    throw error
                }
            }
            return (decision, planned, authorization, credential)
        }
        // A continuation that released nothing (its credential deleted or blocked meanwhile) leaves
        // the earlier release the task's last: given back, the task's next response judges it, as
        // it would have without the continuation, instead of being refused as a late copy.
        if let continued, decision.released == nil {
            try? await uncancelled { [store] in try await store.abandonContinuation(of: continued) }
        }
        // `stale=true` renews the nonce of a header issued for the task: in another realm or scheme
        // than the earlier release's it is none (that release was counted as rejected), and on the
        // task's first response there was no header to renew.
        let renewsNonce = earlier != nil && countedRejection == nil
        let reasonCode = planned.reasonCode == .staleNonce && !renewsNonce ? .authorization : planned.reasonCode
        return ResponseAnswer(
            decisionId: decision.id,
            disposition: planned.plan.disposition,
            reasonCode: reasonCode,
            authorization: authorization,
            credential: credential,
            persistence: planned.plan.persistence,
            scope: planned.plan.scope,
            remainingAttempts: decision.remainingAttempts,
            blockedUntil: planned.plan.blockedUntil,
            rule: planned.plan.rule,
            source: planned.plan.source,
            reason: planned.plan.reason,
            countedRejection: countedRejection,
            protectionSpace: .init(planned.space),
            challenges: planned.selection.assessments.map { .init($0, plans: planned.plansBySpaceKey, context: context) }
        )
    }

    /// How `context` is answered from `state` (``ResponseDecider``), at the task's `failureCount`.
    static func plan(_ context: RawResponseContext, from state: DecisionService.DecisionState, failureCount: Int) throws -> ResponsePlan {
        try ResponseDecider.plan(context, policy: state.tenant.policy.policy, canAnswer: Self.canAnswer) { space in
            // A Digest header is computed here; Basic's carries the password, and NTLM's
            // handshake runs in the client with it.
            state.plan(
                for: Challenge(taskId: context.taskId, protectionSpace: space, previousFailureCount: failureCount),
                releasesPassword: space.method != .httpDigest
            )
        }
    }

    /// Refuses, before the rejection it implies is counted, a response that cannot be answered
    /// (every challenge malformed; a Digest `auth-int` challenge without the request's body; a
    /// request method or target no header can name): a malformed response says nothing about the
    /// credential, and a 400 must leave nothing written. Judged on the state as it is, with the
    /// account of the credential that would be released and no secret opened.
    private func checkAnswerable(_ context: RawResponseContext, failureCount: Int, for asker: DecisionService.Asker) async throws {
        let planned = try Self.plan(context, from: try await decisions.state(for: asker), failureCount: failureCount)
        let account = planned.plan.credential.map { ReleasedCredential(kind: $0.kind, user: $0.attributes.account, password: "", domain: $0.domain) }
        _ = try prepare(planned, released: account, context: context)
    }

    /// Runs `record`, the decision that continues `claimed` and the answer built from it; if
    /// either fails, the claim is given up, so that the client can forward the same response again.
    private func abandoningClaim<Recorded>(on claimed: DecisionEntry?, _ record: () async throws -> Recorded) async throws -> Recorded {
        do {
            return try await record()
        } catch {
            if let claimed { try? await uncancelled { [store] in try await store.abandonContinuation(of: claimed) } }
            throw error
        }
    }

    /// A 403 for a task that was given a credential: the server knows who is asking and says no.
    private func refusal(_ context: RawResponseContext, for asker: DecisionService.Asker) async throws -> ResponseAnswer {
        guard let earlier = try await earlierRelease(context, sessionID: asker.sessionID) else {
            throw CountersignError(
                .noReleasedCredential,
                "Countersign released no credential to task '\(context.taskId)' for \(context.target.host):\(context.target.port); a 403 without one is not an authentication matter"
            )
        }
        try await decisions.checkAnswering(asker)
        _ = try await decisions.recordOutcome(.refused, upstreamStatus: 403, of: earlier.id, tenantID: asker.tenantID, source: "response")
        let space = ProtectionSpace(
            host: earlier.protectionSpace.host,
            port: earlier.protectionSpace.port,
            protocolName: earlier.protectionSpace.protocol,
            realm: earlier.protectionSpace.realm,
            authenticationMethod: AuthenticationMethod(rawValue: earlier.protectionSpace.authenticationMethod),
            isProxy: earlier.protectionSpace.isProxy
        )
        let (decision, planned, _) = try await decisions.decideAndRecord(
            taskID: context.taskId,
            kind: "response",
            previousFailureCount: earlier.previousFailureCount,
            for: asker,
            plan: { _ in ResponseDecider.refusal(space: space, rule: earlier.rule) },
            prepare: { _, _ in Prepared.none }
        )
        return ResponseAnswer(
            decisionId: decision.id,
            disposition: planned.plan.disposition,
            reasonCode: planned.reasonCode,
            authorization: nil,
            credential: nil,
            persistence: planned.plan.persistence,
            scope: planned.plan.scope,
            remainingAttempts: nil,
            blockedUntil: nil,
            rule: planned.plan.rule,
            source: planned.plan.source,
            reason: planned.plan.reason,
            countedRejection: nil,
            protectionSpace: .init(space),
            challenges: []
        )
    }

    /// The release this response answers: the decision the client names, else the latest one
    /// that released a credential to this task for this server.
    private func earlierRelease(_ context: RawResponseContext, sessionID: UUID) async throws -> DecisionEntry? {
        guard context.carriedHeader else { return nil }
        if let id = context.previousDecisionId {
            guard let entry = try await store.get(sessionID: sessionID, id: id) else {
                throw CountersignError(.notFound, "'previousDecisionId' names no decision of this session")
            }
            // Another server's answer says nothing of the header: a request redirected from the
            // server that took it to one that asks for its own is no rejection of it.
            let space = entry.protectionSpace
            let sameServer = space.isProxy == context.target.isProxy && space.port == context.target.port
                && ProtectionSpace.foldedHost(space.host) == ProtectionSpace.foldedHost(context.target.host)
            return entry.disposition == .useCredential && entry.credentialId != nil && sameServer ? entry : nil
        }
        return try await store.lastRelease(
            sessionID: sessionID,
            taskID: context.taskId,
            isProxy: context.target.isProxy,
            host: context.target.host,
            port: context.target.port
        )
    }

    /// Whether the response says the earlier Digest answer failed only for its nonce: a Digest
    /// challenge of the same realm with `stale=true`.
    static func isStale(_ earlier: DecisionEntry, in context: RawResponseContext) -> Bool {
        guard earlier.protectionSpace.authenticationMethod == AuthenticationMethod.httpDigest.rawValue else { return false }
        return context.challenges.contains { challenge in
            guard challenge.scheme == .digest, let digest = try? DigestChallenge(challenge) else { return false }
            return digest.isStale && digest.realm == (earlier.protectionSpace.realm ?? "")
        }
    }

    /// Whether the response goes on with the attempt the earlier release began, not a further
    /// failure: a new nonce for a good credential, or the server's next handshake message. Each
    /// only so often per attempt: a server that calls every nonce stale, or keeps sending
    /// CHALLENGE messages, is refusing the credential, and a client must not loop for ever.
    private func continuesAttempt(_ earlier: DecisionEntry, in context: RawResponseContext) async throws -> Bool {
        let allowed: Int
        if Self.isStale(earlier, in: context) {
            allowed = Self.nonceRenewalsPerAttempt
        } else if Self.continuesHandshake(earlier, in: context) {
            allowed = 1
        } else {
            return false
        }
        return try await store.continuations(of: earlier) < allowed
    }

    /// Nonces a server may renew (`stale=true`) within one attempt: a nonce expiring while the
    /// request was under way is ordinary, one after another is a server refusing the credential.
    static let nonceRenewalsPerAttempt = 3

    /// Whether the response is the next message of the NTLM handshake the earlier release began:
    /// an `NTLM` challenge carrying the server's CHALLENGE message (MS-NLMP §3.1.5.1). A failed
    /// handshake ends with a bare `NTLM` challenge again; any other token ends it too.
    static func continuesHandshake(_ earlier: DecisionEntry, in context: RawResponseContext) -> Bool {
        guard earlier.protectionSpace.authenticationMethod == AuthenticationMethod.ntlm.rawValue else { return false }
        return context.challenges.contains { $0.scheme == .ntlm && isChallengeMessage($0.token68) }
    }

    /// Whether `token` is base64 of an NTLM CHALLENGE message (MS-NLMP §2.2.1.2): the signature
    /// `NTLMSSP\0`, then the message type 2 as 32 bits little-endian.
    static func isChallengeMessage(_ token: String?) -> Bool {
        guard let token, !token.isEmpty else { return false }
        // Some servers leave the padding out.
        let padded = token + String(repeating: "=", count: (4 - token.utf8.count % 4) % 4)
        guard let message = Data(base64Encoded: padded) else { return false }
        return message.starts(with: challengeMessagePrefix)
    }

    private static let challengeMessagePrefix: [UInt8] = Array("NTLMSSP".utf8) + [0, 2, 0, 0, 0]

    /// Checks, before anything is recorded, that the chosen challenge can be answered with the
    /// released credential, so that a decision is never recorded for an answer that then fails.
    private func prepare(_ planned: ResponsePlan, released: ReleasedCredential?, context: RawResponseContext) throws -> Prepared {
        guard planned.plan.disposition == .useCredential, let released, let credential = planned.plan.credential,
            let chosen = planned.chosen
        else { return .none }
        switch chosen.mechanism {
        case .some(.basic):
            return .basic(
                headerValue: try BasicAuthorization.headerValue(
                    user: released.user, password: released.password, charsetUTF8: chosen.challenge.parameter("charset") != nil
                )
            )
        case .some(.digest):
            guard let digest = chosen.digest else { return .none }
            // A dry run with placeholder counts: the real ones are taken only once the decision is recorded.
            _ = try responder.authorization(
                for: digest,
                user: released.user,
                password: released.password,
                method: context.method,
                requestURI: context.requestTarget,
                entityBody: context.entityBody,
                cnonce: "0",
                nonceCount: 1
            )
            return .digest(digest, credentialID: credential.id)
        case .some(.ntlm):
            return .ntlm
        default:
            return .none
        }
    }

    /// The Digest header, with the next central nonce count and a fresh cnonce; for a `-sess`
    /// algorithm the nonce's first cnonce, which its A1 is computed from (RFC 7616 §3.4.2).
    private func digestHeader(
        _ challenge: DigestChallenge,
        credentialID: UUID,
        released: ReleasedCredential,
        tenantID: UUID,
        context: RawResponseContext
    ) async throws -> String {
        var nonceCount: UInt32 = 1
        var cnonce = "-"
        // RFC 2069 mode (no qop) sends neither nc nor cnonce, so it takes no count.
        if !challenge.qopOptions.isEmpty {
            let fresh = try SecureRandom.bytes(16).hexString
            guard let use = try await nonceCounts.next(tenantID: tenantID, credentialID: credentialID, nonce: challenge.nonce, cnonce: fresh) else {
                throw CountersignError(.serviceBusy, "the credential was deleted while the answer was being built; retry")
            }
            nonceCount = use.count
            cnonce = challenge.algorithm.isSession ? use.firstCnonce : fresh
        }
        return try responder.authorization(
            for: challenge,
            user: released.user,
            password: released.password,
            method: context.method,
            requestURI: context.requestTarget,
            entityBody: context.entityBody,
            cnonce: cnonce,
            nonceCount: nonceCount
        ).headerValue
    }
}

private func hashAlgorithm(of algorithm: DigestHashAlgorithm) -> HashAlgorithm {
    switch algorithm {
    case .md5: .md5
    case .sha256: .sha256
    case .sha512_256: .sha512_256
    }
}
