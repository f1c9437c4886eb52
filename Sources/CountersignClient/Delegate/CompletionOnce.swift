import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A challenge's completion handler, handed out once: whoever claims it first (the service's
/// answer, the deadline, a fallback) calls it; every later claim gets `nil`. URLSession requires
/// exactly one call, and several paths race to make it.
final class CompletionOnce: Sendable {
    typealias Handler = @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void

    private let handler: Mutex<Handler?>

    init(_ handler: @escaping Handler) {
        self.handler = Mutex(handler)
    }

    /// The handler, the first time only. Call it outside any lock.
    func claim() -> Handler? {
        handler.withLock { handler in
            let claimed = handler
            handler = nil
            return claimed
        }
    }

    /// Whether the handler was claimed already.
    var isClaimed: Bool { handler.withLock { $0 == nil } }
}
