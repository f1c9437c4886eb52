public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A URLSession delegate that forwards every authentication challenge to Countersign and answers
/// with its decision.
///
/// Set one on each URLSession whose challenges Countersign should answer (one delegate per
/// URLSession: it is that session's twin on the service):
///
/// ```swift
/// let client = CountersignClient(baseURL: serviceURL, key: ClientKey(clientKey))
/// let delegate = CountersignSessionDelegate(client: client, configuration: .init(clientId: "ios-7F3A"))
/// let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
/// ```
///
/// `.ephemeral`, or any configuration whose `urlCredentialStorage` belongs to this URLSession
/// alone: URLSession keeps a `forSession` credential in the configuration's credential storage,
/// and `.default`'s is the process-wide `URLCredentialStorage.shared`, where a released password
/// would outlive the session, its blocks and its secret's changes, readable by any code in the
/// process.
///
/// What it does:
/// - **Session.** Opens a Countersign session at the first challenge, once, however many
///   challenges arrive together; opens a new one if the service says it expired. One the app
///   invalidated through the API (``CountersignClient/invalidateSession(_:mode:)``) is not
///   replaced: later challenges get the fallback, as after the URLSession's invalidation.
/// - **Challenges.** Forwards session-wide (`urlSession(_:didReceive:completionHandler:)`) and
///   task-specific (`urlSession(_:task:didReceive:completionHandler:)`) challenges with the
///   protection space, the proposed credential (its user and whether it had a password, never
///   the password), the previous failure count and the failure response's status and headers
///   (cookies withheld). The task is named by its `taskIdentifier`; session-wide challenges by
///   `session`. When URLSession retries a task at a space where this delegate gave it a
///   credential but proposes none (FoundationNetworking never does), the delegate names that
///   credential's user as the proposed credential, so the service counts the rejection as it
///   does for Apple's URLSession.
/// - **Answers.** `useCredential` with a password becomes `URLCredential(user:password:persistence:)`
///   (NTLM: `DOMAIN\user`), at the returned persistence capped by
///   ``Configuration/persistenceLimit`` (`forSession` unless the app asks for more: the service
///   itself keeps what persists longer). On Apple platforms a client identity is imported from
///   the released PKCS#12 with its one-time passphrase, and a `useCredential` answer to a
///   server-trust challenge becomes `URLCredential(trust:)`. FoundationNetworking has neither
///   identities nor trust objects: there such answers get the fallback.
/// - **Exactly once.** The completion handler is called exactly once on every path: with the
///   service's answer; with ``Configuration/fallback`` (`performDefaultHandling` by default)
///   when the service is unreachable, answers 5xx or something that is not the contract's JSON,
///   refuses the key, or does not answer within ``Configuration/challengeTimeout``; with
///   `cancelAuthenticationChallenge` after ``Configuration/maxAttemptsPerTask`` failures.
/// - **Outcomes.** When a task completes (`urlSession(_:task:didCompleteWithError:)`), each
///   credential it was given is reported: `rejected` with the status when the same space
///   challenged the task again or the task ended with that space's 401/407 (unless the service
///   already counted the retry); `refused` with 403 when that origin answered 403 (the server
///   took the credential and refuses anyway: neither counted nor a reset of the count);
///   `accepted` with the status when the task ended with any other response; `cancelled` when it
///   ended without a response, or failed (timed out, cancelled)
///   while the request carrying the credential was under way; `accepted` without a status when
///   another realm of the same server challenged the task afterwards with the same method (the
///   server took the credential and moved on). Decisions that released nothing are not reported.
///   Reports are tried again for about 15 s of pauses (``Configuration/outcomeRetry``; the
///   service counts each once).
/// - **Invalidation.** `urlSession(_:didBecomeInvalidWithError:)` invalidates the Countersign
///   session after the pending reports are sent: mode `cancel` when the URLSession became invalid
///   with an error or ``invalidateAndCancel(_:)`` was used, `finishTasks` otherwise (URLSession
///   reports both of its own invalidations with a `nil` error, so only the delegate's helpers
///   tell them apart).
///
/// Platform notes (Linux, swift-corelibs-foundation, measured with Swift 6.3.1): only HTTP 401
/// Basic challenges reach the delegate, always through the task-specific method (a Digest 401
/// raises none: the task ends with it; forward it with
/// ``CountersignClient/answerRawResponse(_:in:)``); URLSession retries a
/// refused credential without limit (the tenant's `maxFailures` or ``Configuration/maxAttemptsPerTask``
/// stops it); `performDefaultHandling` with no proposed credential would leave the task hanging
/// forever, so the delegate answers `cancelAuthenticationChallenge` instead: the task ends with
/// `NSURLErrorCancelled` and the 401 as `task.response`. Tasks made with a completion handler or
/// `data(for:)` do not call `urlSession(_:task:didCompleteWithError:)` there: the delegate keeps
/// each task it answered and sees it completed within a quarter of a second (or at
/// ``waitUntilIdle()``), and reports its outcomes then.
///
/// Apps with a delegate of their own keep it and forward these four methods to a
/// `CountersignSessionDelegate`.
public final class CountersignSessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    /// The API client the delegate asks through.
    public let client: CountersignClient
    public let configuration: Configuration

    let keeper: SessionKeeper
    let ledger = Mutex(TaskLedger())
    let work = WorkTracker()
    let watcher = TaskWatcher()
    private let invalidation = Mutex(InvalidationState())

    private struct InvalidationState {
        /// What the app announced through the delegate's helpers.
        var announcedMode: InvalidationMode?
        /// The invalidation under way, once the URLSession is invalid.
        var task: Task<Void, Never>?
        /// Waiting for the URLSession to report an invalidation announced through the helpers.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    public init(client: CountersignClient, configuration: Configuration) {
        self.client = client
        self.configuration = configuration
        let onEvent = configuration.onEvent
        keeper = SessionKeeper(
            client: client,
            request: OpenSessionRequest(clientId: configuration.clientId, label: configuration.sessionLabel, ttlSeconds: configuration.sessionTTLSeconds),
            onOpen: { session in onEvent?(.sessionOpened(session)) }
        )
        super.init()
    }

    /// A delegate with its own ``CountersignClient`` for `serviceURL`.
    public convenience init(serviceURL: URL, key: ClientKey, clientId: String) {
        self.init(client: CountersignClient(baseURL: serviceURL, key: key), configuration: Configuration(clientId: clientId))
    }

    /// The Countersign session, once the first challenge opened it.
    public var countersignSession: CountersignSession? {
        get async { await keeper.current() }
    }

    // MARK: - URLSessionDelegate

    /// Session-wide challenges (server trust, client certificates, NTLM, Negotiate on Apple platforms).
    public func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        answer(ChallengeSnapshot(challenge), taskIdentifier: nil, completionHandler: completionHandler)
    }

    /// Invalidates the Countersign session with the URLSession.
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        sessionDidBecomeInvalid(error: error)
    }

    // MARK: - URLSessionTaskDelegate

    /// Task-specific challenges (HTTP Basic, Digest, ...; everything on Linux).
    public func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        watcher.watch(task) { [weak self] task in self?.taskDidComplete(task, error: task.error) }
        answer(ChallengeSnapshot(challenge), taskIdentifier: task.taskIdentifier, completionHandler: completionHandler)
    }

    /// Reports the outcomes of the task's decisions.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        taskDidComplete(task, error: error)
    }

    // MARK: - For apps

    /// Settles `task`'s decisions as its completion does. URLSession calls this itself through
    /// `urlSession(_:task:didCompleteWithError:)`; where it does not (tasks behind `data(for:)`
    /// or a completion handler on Linux) the delegate sees the task completed within a quarter
    /// of a second, or at ``waitUntilIdle()``. Calling it sooner is allowed; calling it twice
    /// changes nothing.
    public func taskDidComplete(_ task: URLSessionTask, error: (any Error)?) {
        watcher.forget(task.taskIdentifier)
        taskDidComplete(taskIdentifier: task.taskIdentifier, response: task.response, error: error)
    }

    /// Invalidates `session` with `finishTasksAndInvalidate()`; the Countersign session ends
    /// in mode `finishTasks` once the tasks are done.
    public func finishTasksAndInvalidate(_ session: URLSession) {
        invalidation.withLock { $0.announcedMode = .finishTasks }
        session.finishTasksAndInvalidate()
    }

    /// Invalidates `session` with `invalidateAndCancel()`; the Countersign session ends in mode
    /// `cancel`, which cancels every decision still without an outcome.
    public func invalidateAndCancel(_ session: URLSession) {
        invalidation.withLock { $0.announcedMode = .cancel }
        session.invalidateAndCancel()
    }

    /// Returns when the delegate has nothing left in flight: answers, outcome reports, and the
    /// Countersign session's invalidation once the URLSession is invalid. After
    /// ``finishTasksAndInvalidate(_:)`` or ``invalidateAndCancel(_:)``, it also waits for
    /// URLSession to report the invalidation (after its last task, for `finishTasksAndInvalidate`).
    public func waitUntilIdle() async {
        settleCompletedTasks()
        await work.waitForAll()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = invalidation.withLock { state in
                guard state.announcedMode != nil, state.task == nil else { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        if let task = invalidation.withLock({ $0.task }) { await task.value }
        await work.waitForAll()
    }

    // MARK: - Challenges

    /// Answers one challenge: at once when it is not to be forwarded, else from a task that asks
    /// Countersign, raced against the challenge deadline.
    func answer(
        _ snapshot: ChallengeSnapshot,
        taskIdentifier: Int?,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let once = CompletionOnce(completionHandler)
        if configuration.ignoredMethods.contains(snapshot.space.authenticationMethod) {
            fallBack(snapshot, taskIdentifier: taskIdentifier, once: once, reason: .ignoredMethod, disposition: .performDefaultHandling)
            return
        }
        // Judged here, on the delegate queue, before the task's end (reported on the same queue)
        // can settle the credential: a task cancelled while this challenge is with Countersign
        // still has its credential reported rejected.
        let rejected = taskIdentifier.flatMap { task in
            ledger.withLock { ledger in
                ledger.challenged(task: task, space: snapshot.space)
                return ledger.retry(task: task, spaceKey: snapshot.space.ledgerKey, previousFailureCount: snapshot.previousFailureCount, status: snapshot.failureStatus)
            }
        }
        work.start {
            await self.resolveAndAnswer(snapshot, taskIdentifier: taskIdentifier, rejected: rejected, once: once)
        }
    }

    private func resolveAndAnswer(_ snapshot: ChallengeSnapshot, taskIdentifier: Int?, rejected: TaskLedger.Use?, once: CompletionOnce) async {
        let timeout = configuration.challengeTimeout
        let deadline = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            self.fallBack(snapshot, taskIdentifier: taskIdentifier, once: once, reason: .timedOut)
        }
        defer { deadline.cancel() }
        switch await resolve(snapshot, taskIdentifier: taskIdentifier, rejected: rejected, once: once) {
        case .decided(let answer):
            await apply(answer, snapshot, taskIdentifier: taskIdentifier, once: once)
        case .fallback(let reason, let disposition):
            fallBack(snapshot, taskIdentifier: taskIdentifier, once: once, reason: reason, disposition: disposition)
        }
    }

    private enum Resolution {
        case decided(DecisionAnswer)
        case fallback(FallbackReason, Disposition?)
    }

    /// Asks Countersign, naming the user of the `rejected` credential when URLSession proposes
    /// none. Never throws: every failure is a fallback with its reason. Starts no call once the
    /// deadline has answered (`once` claimed): a decision asked for then would release a
    /// credential nobody uses. A call under way is finished and its decision settled.
    private func resolve(_ snapshot: ChallengeSnapshot, taskIdentifier: Int?, rejected: TaskLedger.Use?, once: CompletionOnce) async -> Resolution {
        var challenge = snapshot.challenge(taskId: taskIdentifier.map(String.init) ?? "session")
        if let rejected, challenge.proposedCredential == nil {
            challenge.proposedCredential = ProposedCredential(user: rejected.user, hasPassword: true)
        }
        // Session-wide challenges too: on Apple platforms a refused NTLM or Negotiate handshake
        // comes back through the session-wide method, with its failures counted up the same way.
        if snapshot.previousFailureCount >= configuration.maxAttemptsPerTask {
            return .fallback(.tooManyAttempts(snapshot.previousFailureCount), .cancelAuthenticationChallenge)
        }
        // One more round when the session ended under us (expired, swept): open another and ask again.
        for round in 0..<2 {
            guard !once.isClaimed else { return .fallback(.timedOut, nil) }
            let session: CountersignSession
            switch await keeper.session() {
            case .success(let opened): session = opened
            case .failure(.invalidated): return .fallback(.invalidated, nil)
            case .failure(.service(let error)): return .fallback(.serviceFailed(error), nil)
            }
            guard !once.isClaimed else { return .fallback(.timedOut, nil) }
            do {
                return .decided(try await client.decideChallenge(challenge, in: session.id))
            } catch {
                let invalidated = error.serviceCode == CountersignClientError.Code.sessionInvalidated
                let sessionGone = invalidated || (error.status == 404 && error.serviceCode == CountersignClientError.Code.notFound)
                if round == 0, sessionGone {
                    // Only a session that lapsed is replaced: one that was invalidated on purpose
                    // (the app ended it through the API) refuses new challenges, as the contract
                    // says, and a replacement would have the service release credentials again.
                    if invalidated, await endedOnPurpose(session.id) {
                        await keeper.endedOnPurpose(session.id)
                        return .fallback(.invalidated, nil)
                    }
                    await keeper.discard(session.id)
                    continue
                }
                return .fallback(.serviceFailed(error), nil)
            }
        }
        return .fallback(.invalidated, nil)
    }

    /// Whether session `id` was invalidated explicitly rather than by its expiry. When the service
    /// cannot say, the session is taken as lapsed, as before this was asked.
    private func endedOnPurpose(_ id: UUID) async -> Bool {
        guard let ended = try? await client.getSession(id) else { return false }
        return ended.invalidationReason == .explicit
    }

    /// Hands URLSession the service's answer, or the fallback when its credential cannot be used here.
    private func apply(_ answer: DecisionAnswer, _ snapshot: ChallengeSnapshot, taskIdentifier: Int?, once: CompletionOnce) async {
        // Whether or not this answer is applied (the deadline may have answered first), the
        // service counted the rejection it names: the task's end must not report it again.
        if let counted = answer.countedRejection { ledger.withLock { $0.serviceCounted(counted) } }
        var credential: URLCredential?
        if answer.disposition == .useCredential {
            switch CredentialBuilder.credential(for: answer, challenge: snapshot, persistenceLimit: configuration.persistenceLimit) {
            case .success(let built):
                credential = built
            case .failure(let unusable):
                fallBack(snapshot, taskIdentifier: taskIdentifier, once: once, reason: .unusableCredential(unusable.reason), decisionId: answer.decisionId)
                // Released but never used: settle it so it does not wait for an outcome forever.
                await settleUnused(answer.decisionId)
                return
            }
        }
        let disposition = PlatformBehaviour.deliverable(answer.disposition.urlSessionDisposition, hasProposedCredential: snapshot.proposedCredential != nil)
        let summary = DecisionSummary(answer, taskIdentifier: taskIdentifier, space: snapshot.space, applied: disposition.contractDisposition)
        guard let handler = once.claim() else {
            // The deadline answered first; this decision was never applied.
            if credential != nil { await settleUnused(answer.decisionId) }
            return
        }
        var use: TaskLedger.Use?
        if taskIdentifier != nil, credential != nil, answer.credential?.kind == .password, let user = answer.credential?.user {
            use = TaskLedger.Use(
                decisionId: answer.decisionId,
                user: user,
                spaceKey: snapshot.space.ledgerKey,
                isProxy: snapshot.space.isProxy,
                host: snapshot.space.host,
                port: snapshot.space.effectivePort,
                realm: snapshot.space.realm,
                method: snapshot.space.authenticationMethod
            )
        }
        let recorded = ledger.withLock { ledger in
            guard let taskIdentifier else { return true }
            return ledger.record(summary, use: use, task: taskIdentifier)
        }
        // Told first, as a fallback is.
        emit(.decided(summary))
        handler(disposition, credential)
        if !recorded, use != nil {
            // The task ended (cancelled by the app) before the answer came.
            await settleUnused(answer.decisionId)
        }
    }

    /// Answers without the service's decision. Does nothing when the handler was already called.
    private func fallBack(
        _ snapshot: ChallengeSnapshot,
        taskIdentifier: Int?,
        once: CompletionOnce,
        reason: FallbackReason,
        disposition: Disposition? = nil,
        decisionId: UUID? = nil
    ) {
        let wanted = (disposition ?? configuration.fallback.disposition).urlSessionDisposition
        let applied = PlatformBehaviour.deliverable(wanted, hasProposedCredential: snapshot.proposedCredential != nil)
        guard let handler = once.claim() else { return }
        let summary = FallbackSummary(
            taskIdentifier: taskIdentifier,
            protectionSpace: snapshot.space,
            reason: reason,
            appliedDisposition: applied.contractDisposition,
            decisionId: decisionId,
            replacedDisposition: applied == wanted ? nil : wanted.contractDisposition
        )
        if let taskIdentifier { ledger.withLock { $0.record(summary, task: taskIdentifier) } }
        // Told before URLSession hears it: the task may end on another thread as soon as it does,
        // and its `taskCompleted` must not come before the answer that ended it.
        emit(.fellBack(summary))
        handler(applied, nil)
    }

    /// Reports `cancelled` for a decision whose credential was never handed to URLSession.
    private func settleUnused(_ decisionId: UUID) async {
        guard configuration.reportsOutcomes else { return }
        await report([PendingOutcome(decisionId: decisionId, report: OutcomeReport(outcome: .cancelled))])
    }

    // MARK: - Tasks and invalidation

    func taskDidComplete(taskIdentifier: Int, response: URLResponse?, error: (any Error)?) {
        let http = response as? HTTPURLResponse
        let port = http?.url.map { url in url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }
        let completion = ledger.withLock { $0.complete(task: taskIdentifier, status: http?.statusCode, host: http?.url?.host, port: port, endedWithError: error != nil) }
        // Seen twice: by URLSession's callback and by the watcher, which may come first.
        guard !completion.repeated else { return }
        emit(
            .taskCompleted(
                TaskSummary(
                    taskIdentifier: taskIdentifier,
                    status: http?.statusCode,
                    error: error,
                    decisions: completion.decisions,
                    fallbacks: completion.fallbacks,
                    outcomes: completion.reports
                )
            )
        )
        guard configuration.reportsOutcomes, !completion.reports.isEmpty else { return }
        work.start { await self.report(completion.reports) }
    }

    private func report(_ outcomes: [PendingOutcome]) async {
        for outcome in outcomes {
            do {
                let response = try await client.reportOutcome(outcome.report, for: outcome.decisionId, retry: configuration.outcomeRetry)
                emit(.outcomeReported(decisionId: outcome.decisionId, report: outcome.report, counted: response.counted))
            } catch {
                emit(.outcomeReportFailed(decisionId: outcome.decisionId, report: outcome.report, error: error))
            }
        }
    }

    /// Settles the answered tasks that completed without URLSession saying so.
    private func settleCompletedTasks() {
        watcher.sweep { [weak self] task in self?.taskDidComplete(task, error: task.error) }
    }

    private func sessionDidBecomeInvalid(error: (any Error)?) {
        let waiters = invalidation.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.task == nil else { return [] }
            let mode: InvalidationMode = error != nil ? .cancel : (state.announcedMode ?? .finishTasks)
            // Mark it announced too, so that `waitUntilIdle` never waits for it again.
            state.announcedMode = state.announcedMode ?? mode
            state.task = Task {
                // Outcomes first: `cancel` turns every decision still without one into `cancelled`.
                self.settleCompletedTasks()
                await self.work.waitForAll()
                switch await self.keeper.invalidate(mode) {
                case .success(let session): self.emit(.sessionInvalidated(session))
                case .failure(let error): self.emit(.sessionInvalidationFailed(error))
                case nil: break
                }
            }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func emit(_ event: Event) {
        configuration.onEvent?(event)
    }
}
