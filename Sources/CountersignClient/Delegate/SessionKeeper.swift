import Foundation

/// The Countersign session behind one URLSession: opened once, at the first challenge, however
/// many challenges arrive together; replaced if the service says it ended (expired); invalidated
/// with the URLSession, after which no new one is opened.
actor SessionKeeper {
    enum Failure: Error, Sendable {
        case invalidated
        case service(CountersignClientError)
    }

    private let client: CountersignClient
    private let request: OpenSessionRequest
    private let onOpen: @Sendable (CountersignSession) -> Void
    /// The opening in flight or done; every caller awaits the same one.
    private var opening: Task<Result<CountersignSession, CountersignClientError>, Never>?
    private var isInvalidated = false

    init(client: CountersignClient, request: OpenSessionRequest, onOpen: @escaping @Sendable (CountersignSession) -> Void) {
        self.client = client
        self.request = request
        self.onOpen = onOpen
    }

    /// The session, opening it if none is open. A failed opening is not remembered: the next
    /// challenge tries again.
    func session() async -> Result<CountersignSession, Failure> {
        guard !isInvalidated else { return .failure(.invalidated) }
        let task: Task<Result<CountersignSession, CountersignClientError>, Never>
        if let opening {
            task = opening
        } else {
            let client = client
            let request = request
            let onOpen = onOpen
            task = Task {
                do throws(CountersignClientError) {
                    let session = try await client.openSession(request)
                    onOpen(session)
                    return .success(session)
                } catch {
                    return .failure(error)
                }
            }
            opening = task
        }
        switch await task.value {
        case .success(let session):
            return .success(session)
        case .failure(let error):
            if opening == task { opening = nil }
            return .failure(.service(error))
        }
    }

    /// The service says session `id` ended under us (expired or swept): the next call opens
    /// another, unless the URLSession was invalidated meanwhile.
    func discard(_ id: UUID) async {
        guard let current = opening else { return }
        if case .success(let session) = await current.value, session.id == id, opening == current {
            opening = nil
        }
    }

    /// Session `id` was invalidated explicitly (not by its expiry): no other is opened, as after
    /// ``invalidate(_:)``.
    func endedOnPurpose(_ id: UUID) async {
        guard let current = opening, case .success(let session) = await current.value, session.id == id else { return }
        isInvalidated = true
    }

    /// The session, if one was opened (or is being opened).
    func current() async -> CountersignSession? {
        guard let opening else { return nil }
        if case .success(let session) = await opening.value { return session }
        return nil
    }

    /// Ends the session with the URLSession; no other is opened afterwards. `nil` when none was open.
    func invalidate(_ mode: InvalidationMode) async -> Result<CountersignSession, CountersignClientError>? {
        isInvalidated = true
        guard let opening, case .success(let session) = await opening.value else { return nil }
        do {
            return .success(try await client.invalidateSession(session.id, mode: mode))
        } catch {
            return .failure(error)
        }
    }
}
