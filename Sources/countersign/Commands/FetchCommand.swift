import ArgumentParser
import CountersignClient
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch a URL through URLSession, letting Countersign answer its authentication challenges.",
        discussion: """
            Uses CountersignSessionDelegate as a fleet app would: the first challenge opens a \
            Countersign session, every challenge is forwarded, the task's outcome is reported, and \
            the session is invalidated at the end. Prints the HTTP status and each decision taken \
            (decision id, disposition, rule, reason); never a password. Exits 0 for a 2xx or 3xx \
            status, 1 otherwise.

            With --raw, no delegate answers anything: the request goes out as it is, a 401 (or a \
            403 after a released header) is forwarded raw to Countersign (answerRawResponse, \
            CFHTTPAuthentication style), and the request is sent again with the Authorization \
            header Countersign computed (Basic, or Digest without the password leaving the \
            service), until the server accepts it or Countersign says to stop. Origin servers \
            (401) only; the header's value is never printed.
            """
    )

    @Argument(help: "The URL to fetch.")
    var url: String

    @Option(help: "Countersign's base URL. Env: COUNTERSIGN_SERVICE_URL.")
    var service: String = Environment.string("COUNTERSIGN_SERVICE_URL") ?? "http://127.0.0.1:8080"

    @Option(help: ArgumentHelp("The client key. Env: COUNTERSIGN_CLIENT_KEY (preferred: a flag shows in the process list).", valueName: "key"))
    var key: String?

    @Option(help: "The client id to open the session with. Env: COUNTERSIGN_CLIENT_ID.")
    var clientId: String = Environment.string("COUNTERSIGN_CLIENT_ID") ?? "countersign-fetch"

    @Option(help: "HTTP method.")
    var method: String = "GET"

    @Option(help: "Answer when Countersign cannot: performDefaultHandling, cancelAuthenticationChallenge, rejectProtectionSpace.")
    var fallback: String = CountersignSessionDelegate.Fallback.performDefaultHandling.rawValue

    // `.unconditional`, so that a negative value gets the range rather than "Missing value".
    @Option(parsing: .unconditional, help: "Seconds to wait for the whole fetch, 1 to 86400.")
    var timeout: Int = 60

    @Flag(help: "Forward raw 401/403 responses and send the Authorization header Countersign returns, instead of using the URLSession delegate.")
    var raw = false

    func validate() throws {
        guard let target = URL(string: url), target.scheme == "http" || target.scheme == "https", target.host != nil else {
            throw ValidationError("the URL must be an http or https URL with a host")
        }
        guard let base = URL(string: service), base.scheme == "http" || base.scheme == "https", base.host != nil else {
            throw ValidationError("--service must be an http or https URL with a host")
        }
        guard CountersignSessionDelegate.Fallback(rawValue: fallback) != nil else {
            throw ValidationError("--fallback must be one of \(CountersignSessionDelegate.Fallback.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard resolvedKey != nil else { throw ValidationError("give the client key with COUNTERSIGN_CLIENT_KEY or --key") }
        // Far larger values overflow the deadlines URLSession and the timer compute from it (a trap).
        guard (1...86_400).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 86400 seconds") }
    }

    private var resolvedKey: String? { key ?? Environment.string("COUNTERSIGN_CLIENT_KEY") }

    func run() async throws {
        guard let target = URL(string: url), let base = URL(string: service), let secret = resolvedKey,
            let fallback = CountersignSessionDelegate.Fallback(rawValue: fallback)
        else { throw ExitCode.validationFailure }

        if raw {
            let client = CountersignClient(baseURL: base, key: ClientKey(secret))
            let fetch = RawFetch(client: client, clientId: clientId, method: method.uppercased(), timeout: .seconds(timeout))
            let status = await fetch.run(target)
            print(status.map { "status: \($0)" } ?? "status: none")
            guard let status, (200..<400).contains(status) else { throw ExitCode.failure }
            return
        }

        let completions = TaskCompletions()
        let printer = EventPrinter()
        let client = CountersignClient(baseURL: base, key: ClientKey(secret))
        let delegate = CountersignSessionDelegate(
            client: client,
            configuration: .init(clientId: clientId, sessionLabel: "countersign fetch", fallback: fallback) { event in
                printer.print(event)
                if case .taskCompleted(let summary) = event { completions.complete(summary) }
            }
        )
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        var request = URLRequest(url: target)
        request.httpMethod = method.uppercased()
        request.timeoutInterval = TimeInterval(timeout)

        print("\(request.httpMethod ?? "GET") \(Self.shown(target))")
        // A delegate-driven task (no completion handler): URLSession then reports its end to the
        // delegate on every platform, which is where outcomes are reported.
        let task = session.dataTask(with: request)
        let summary = await completions.wait(for: task.taskIdentifier, timeout: .seconds(timeout)) { task.resume() }
        guard let summary else {
            // Cancelled first: a URLSession finishing its tasks would wait for this one.
            delegate.invalidateAndCancel(session)
            await delegate.waitUntilIdle()
            print("no answer within \(timeout) s")
            throw ExitCode.failure
        }
        delegate.finishTasksAndInvalidate(session)
        await delegate.waitUntilIdle()
        if let status = summary.status {
            print("status: \(status)")
            #if canImport(FoundationNetworking)
            if status == 401 || status == 407, summary.decisions.isEmpty, summary.fallbacks.isEmpty {
                print("no challenge reached Countersign: URLSession on Linux hands the delegate Basic challenges only; try --raw")
            }
            #endif
        } else if let error = summary.error, Self.isTimeout(error) {
            // The request's timeout is `--timeout` too, and may end it first.
            print("no answer within \(timeout) s")
        } else {
            // The error's own description lists its userInfo, whose failing URL keeps a password.
            print("no response: \(summary.error.map { ($0 as NSError).localizedDescription } ?? "unknown error")")
        }
        guard let status = summary.status, (200..<400).contains(status) else { throw ExitCode.failure }
    }

    /// Whether URLSession gave up waiting for the server (`NSURLErrorTimedOut`).
    static func isTimeout(_ error: any Error) -> Bool {
        let error = error as NSError
        return error.domain == NSURLErrorDomain && error.code == NSURLErrorTimedOut
    }
}

extension FetchCommand {
    /// `url` as it may be printed: without the user and password a URL may carry
    /// (`https://alice:secret@host/`), which are the caller's secret.
    static func shown(_ url: URL) -> String {
        guard url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return url.absoluteString }
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        return components.string ?? "(a URL with credentials)"
    }
}

/// Prints the delegate's events as they happen, without secrets (events carry none).
private struct EventPrinter: Sendable {
    func print(_ event: CountersignSessionDelegate.Event) {
        switch event {
        case .sessionOpened(let session):
            Swift.print("countersign session \(session.id.uuidString.lowercased()) opened (client \(session.clientId))")
        case .decided(let decision):
            Swift.print("decision \(decision)")
        case .fellBack(let fallback):
            Swift.print("\(fallback)")
        case .taskCompleted:
            break
        case .outcomeReported(let decisionId, let report, let counted):
            let status = report.upstreamStatus.map { " (\($0))" } ?? ""
            Swift.print("outcome \(decisionId.uuidString.lowercased()) \(report.outcome)\(status)\(counted ? ", counted as a rejection" : "")")
        case .outcomeReportFailed(let decisionId, let report, let error):
            Swift.print("outcome \(decisionId.uuidString.lowercased()) \(report.outcome) not reported: \(error)")
        case .sessionInvalidated(let session):
            Swift.print("countersign session \(session.id.uuidString.lowercased()) invalidated (\(session.invalidationMode?.rawValue ?? "?"))")
        case .sessionInvalidationFailed(let error):
            Swift.print("countersign session not invalidated: \(error)")
        }
    }
}

/// Waits for one task's completion, as the delegate announces it.
private final class TaskCompletions: Sendable {
    private struct State {
        var finished: [Int: CountersignSessionDelegate.TaskSummary] = [:]
        var waiters: [Int: CheckedContinuation<CountersignSessionDelegate.TaskSummary?, Never>] = [:]
    }

    private let state = Mutex(State())

    func complete(_ summary: CountersignSessionDelegate.TaskSummary) {
        let waiter = state.withLock { state in
            if let waiter = state.waiters.removeValue(forKey: summary.taskIdentifier) { return Optional(waiter) }
            state.finished[summary.taskIdentifier] = summary
            return nil
        }
        waiter?.resume(returning: summary)
    }

    /// Runs `start`, then waits at most `timeout` for task `id` to complete.
    func wait(for id: Int, timeout: Duration, start: () -> Void) async -> CountersignSessionDelegate.TaskSummary? {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if let summary = state.finished.removeValue(forKey: id) { return Optional(summary) }
                state.waiters[id] = continuation
                return nil
            }
            if let done {
                continuation.resume(returning: done)
                return
            }
            // Registered first, so the timer always finds the waiter unless the task won.
            Task {
                try? await Task.sleep(for: timeout)
                let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume(returning: nil)
            }
            start()
        }
    }
}
