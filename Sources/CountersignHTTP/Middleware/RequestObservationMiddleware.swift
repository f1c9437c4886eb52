import CountersignCrypto
import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import Synchronization

/// One access-log line and the request metrics for every request, and the request id echoed
/// in `X-Request-Id` so that a client report can be matched with the log.
///
/// It sits outside `ErrorMiddleware`, so it sees the status the client got. The route label
/// is the matched route template, never the concrete path, which would carry ids. Who asked
/// (tenant and key prefix, or the operator) comes from `AuthenticationMiddleware`, further in.
struct RequestObservationMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    static var requestIDField: HTTPField.Name { HTTPField.Name("X-Request-Id")! }
    static var forwardedForField: HTTPField.Name { HTTPField.Name("X-Forwarded-For")! }
    /// Failures are logged at this level, other requests at info.
    static let lowestLevel = Logger.Level.warning

    let metrics: RequestMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        var context = context
        // A proxy's id (nginx's `$request_id`), kept so that its log and ours name one request
        // alike; an id of another shape is replaced, since it would reach log lines as it came.
        if let forwarded = request.headers[Self.requestIDField], Self.isRequestID(forwarded) {
            context.logger[metadataKey: "hb.request.id"] = .string(forwarded)
        }
        var response = try await next(request, context)
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        // Hummingbird names a path no route takes "NotFound": one label, `unmatched`, for every
        // request no route took, as for those refused before routing (`HTTPGuardHandler`).
        let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        let status = response.status.code
        // The HTTP parser passes on every method it knows (WebDAV's PROPFIND, MKCOL, LOCK... some
        // thirty), and each would open its own series on every route a scanner tries: those are
        // counted as `OTHER`, as the refusals before routing are.
        metrics.record(route: route, method: RequestMetrics.label(request.method), status: status, nanoseconds: elapsed)
        response.headers[Self.requestIDField] = context.id
        let level: Logger.Level = status >= 500 ? Self.lowestLevel : .info
        if context.logger.logLevel <= level {
            var metadata: Logger.Metadata = [
                "method": .string(request.method.rawValue),
                "route": .string(route),
                "status": .stringConvertible(status),
                "duration_ms": Self.duration(nanoseconds: elapsed),
            ]
            if let who = context.accessLog?.metadata { metadata.merge(who) { current, _ in current } }
            if let peer = context.peer?.ipAddress { metadata["peer"] = .string(peer) }
            // What the client says, through a proxy, is only ever its own field: the peer is the
            // address that can be trusted.
            if let forwardedFor = request.headers[Self.forwardedForField] { metadata["forwarded_for"] = .string(Self.loggable(forwardedFor)) }
            context.logger.log(level: level, "request", metadata: metadata)
        }
        return response
    }

    /// Whether a request id a proxy sent can be ours: 1 to 128 letters, digits, `.`, `_`, `-`.
    static func isRequestID(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && text.utf8.allSatisfy { isAlphanumeric($0) || Array("._-".utf8).contains($0) }
    }

    /// `X-Forwarded-For` as a log field: its addresses, comma-separated, each one that is not an
    /// IP address (hex digits, `.`, `:` and brackets, at most 64 bytes) written `?`, at most 16 of
    /// them; so that no client can write words, let alone a line, of its own into the log.
    static func loggable(_ forwardedFor: String) -> String {
        forwardedFor.split(separator: ",", omittingEmptySubsequences: false).prefix(16).map { entry in
            let address = entry.trimmingCharacters(in: .whitespaces)
            let isAddress = !address.isEmpty && address.utf8.count <= 64 && address.utf8.allSatisfy { byte in
                Hex.value(ofDigit: byte) != nil || Array(".:[]".utf8).contains(byte)
            }
            return isAddress ? address : "?"
        }.joined(separator: ", ")
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }

    /// How the access line gives a request's duration: milliseconds, to the microsecond.
    static func duration(nanoseconds: UInt64) -> Logger.MetadataValue {
        .stringConvertible(LoggedNumber(String(format: "%.3f", Double(nanoseconds) / 1_000_000)))
    }
}

/// The request counter and latency histogram, one pair per route, method and status, made once:
/// asking the metrics backend for them on every request costs a lookup under its lock.
final class RequestMetrics: Sendable {
    private struct Key: Hashable {
        var route: String
        var method: HTTPRequest.Method
        var status: Int
    }

    private let instruments = Mutex<[Key: (requests: Counter, duration: Metrics.Timer)]>([:])

    /// The method label of a request: one HTTP defines, else `OTHER`, so that other methods
    /// cannot multiply the series.
    static func label(_ method: HTTPRequest.Method?) -> HTTPRequest.Method {
        guard let method, standardMethods.contains(method) else { return HTTPRequest.Method("OTHER")! }
        return method
    }

    private static let standardMethods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .delete, .connect, .options, .trace, .patch]

    func record(route: String, method: HTTPRequest.Method, status: Int, nanoseconds: UInt64) {
        let key = Key(route: route, method: method, status: status)
        let pair = instruments.withLock { instruments in
            if let pair = instruments[key] { return pair }
            let dimensions = [("route", route), ("method", method.rawValue), ("status", String(status))]
            let pair = (
                requests: Counter(label: "countersign_http_requests_total", dimensions: dimensions),
                duration: Metrics.Timer(label: "countersign_http_request_duration_seconds", dimensions: dimensions)
            )
            instruments[key] = pair
            return pair
        }
        pair.requests.increment()
        pair.duration.recordNanoseconds(Int64(clamping: nanoseconds))
    }
}

/// A number in a log line, written as it is given: a JSON log writes it as a number (which log
/// systems query as one), a text log as its digits.
public struct LoggedNumber: CustomStringConvertible, Sendable {
    public let description: String

    init(_ digits: String) {
        description = digits
    }
}
