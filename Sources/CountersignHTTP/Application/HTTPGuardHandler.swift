import CountersignCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Mends, where the bytes are, what the server's HTTP/1.1 layer would otherwise get wrong:
///
/// - bytes that are no request (a broken request line or header, header fields over the limit)
///   get the service's JSON error where the server would send an empty 400;
/// - a method HTTP does not define, and `CONNECT` (after which the parser would take the
///   connection for a tunnel, and hang), get 501;
/// - a `Transfer-Encoding` other than `chunked` alone, which the server cannot frame, gets 400
///   (RFC 9112 §6.3) before any handler runs;
/// - a response that says `Connection: close` (one refusing a body) is followed by the close, and
///   so is the response to a request whose body's framing broke: the server's empty 400 that
///   would follow it is not sent;
/// - `Expect: 100-continue` (RFC 9110 §10.1.1) gets an interim `100 Continue`, so that a client
///   holding back a large body (curl does above 1 MiB, for a second at most) sends it at once;
///   a body declared larger than the service takes gets none, only its 413.
///
/// One handler rather than one per job: each handler costs every request part a call.
///
/// Refusals carry `X-Request-Id`, write an access-log line and close the connection. They are
/// made only between requests: an error inside a request (its body's framing, say) reaches the
/// handler reading that body, and a response still owed to an earlier request is not overtaken.
final class HTTPGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let logger: Logger
    private let maxBodyBytes: Int
    /// Requests whose head arrived and whose response has not ended yet.
    private var unanswered = 0
    /// The response being written asked for the connection to close after it, or the framing of
    /// its request's body broke.
    private var closeAfterResponse = false
    /// This connection was refused: whatever else arrives on it is dropped.
    private var refused = false

    init(logger: Logger, maxBodyBytes: Int) {
        self.logger = logger
        self.maxBodyBytes = maxBodyBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        guard case .head(var request) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        if unanswered == 0, let refusal = Self.refusal(of: request) {
            refuse(refusal, answering: request.method, context: context)
            return
        }
        unanswered += 1
        guard let expectation = request.headerFields[.expect], expectation.lowercased() == "100-continue" else {
            context.fireChannelRead(data)
            return
        }
        let declaredLength = request.headerFields[.contentLength].flatMap { Int($0) }
        if declaredLength.map({ $0 <= maxBodyBytes }) ?? true {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        // Answered here: nothing further in should act on it again.
        request.headerFields[.expect] = nil
        context.fireChannelRead(wrapInboundOut(.head(request)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if refused {
            // The connection is closing; nothing more is said on it.
            promise?.succeed()
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(let response) where response.status.kind != .informational:
            if response.headerFields[.connection]?.lowercased() == "close" { closeAfterResponse = true }
            context.write(data, promise: promise)
        case .end:
            unanswered -= 1
            guard closeAfterResponse, unanswered == 0 else {
                context.write(data, promise: promise)
                return
            }
            refused = true
            let written = context.writeAndFlush(data)
            written.cascade(to: promise)
            written.whenComplete { _ in context.close(promise: nil) }
        default:
            context.write(data, promise: promise)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if refused { return }
        guard let parserError = error as? HTTPParserError, unanswered == 0 else {
            if error is HTTPParserError { closeAfterResponse = true }
            context.fireErrorCaught(error)
            return
        }
        switch parserError {
        case .invalidMethod:
            refuse(Self.unimplementedMethod, answering: nil, context: context)
        case .headerOverflow:
            refuse(CountersignError(.headersTooLarge, "the request's header fields are too large"), answering: nil, context: context)
        default:
            refuse(CountersignError(.malformedRequest, "the request is not well-formed HTTP/1.1"), answering: nil, context: context)
        }
    }

    private static let unimplementedMethod = CountersignError(
        .methodNotImplemented,
        "the service implements GET, HEAD, POST, PUT, PATCH and DELETE only"
    )

    /// Why a request is refused before any handler sees it, if it is.
    private static func refusal(of request: HTTPRequest) -> CountersignError? {
        if request.method == .connect {
            return unimplementedMethod
        }
        if let codings = request.headerFields[.transferEncoding], codings.lowercased() != "chunked" {
            return CountersignError(.malformedRequest, "the only Transfer-Encoding accepted is chunked, alone")
        }
        return nil
    }

    /// Answers with `refusal` and closes the connection.
    private func refuse(_ refusal: CountersignError, answering method: HTTPRequest.Method?, context: ChannelHandlerContext) {
        refused = true
        let requestID = RequestID()
        var head = HTTPResponse(
            status: refusal.code.kind.status,
            headerFields: [.connection: "close", RequestObservationMiddleware.requestIDField: requestID.description]
        )
        logger.info(
            "request",
            metadata: [
                "hb.request.id": .stringConvertible(requestID), "method": .string(method?.rawValue ?? "unparsable"), "route": "unmatched",
                "status": .stringConvertible(head.status.code), "code": .string(refusal.code.rawValue),
            ]
        )
        // A response to CONNECT has no body in HTTP/1.1's framing: the status says it all.
        if method != .connect {
            let body = ByteBuffer(bytes: JSONResponse.errorBody(refusal))
            head.headerFields[.contentType] = "application/json; charset=utf-8"
            head.headerFields[.contentLength] = String(body.readableBytes)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: nil)
        } else {
            context.write(wrapOutboundOut(.head(head)), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}
