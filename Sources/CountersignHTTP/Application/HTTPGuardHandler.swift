import CountersignCore
import Dispatch
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Mends, where the bytes are, what the server's HTTP/1.1 layer would otherwise get wrong:
///
/// - bytes that are no request (a broken request line or header, header fields over the limit)
///   get the service's JSON error where the server would send an empty 400 or nothing;
/// - a method the HTTP parser does not know, and `CONNECT` (after which the parser would take the
///   connection for a tunnel, and hang), get 501;
/// - a `Transfer-Encoding` other than `chunked` alone, which the server cannot frame, gets 400
///   (RFC 9112 §6.3) before any handler runs;
/// - `Expect: 100-continue` (RFC 9110 §10.1.1) gets an interim `100 Continue`, so that a client
///   holding back a large body (curl does above 1 MiB, for a second at most) sends it at once;
///   a body declared larger than the service takes gets none, only its 413;
/// - the connection is closed after a response that says `Connection: close`, after the answer
///   to a request whose body's framing broke (instead of the server's empty 400 that would
///   follow it), and after an answer given while a body over the limit (or of unknown length)
///   is still arriving, which the server would otherwise read to its end, however long; a
///   request's own `Connection: close` is echoed in its answer;
/// - an HTTP/1.0 request gets no `100 Continue` and, without `Connection: keep-alive`, its
///   connection closes after the answer; a request without exactly one valid `Host` (HTTP/1.0:
///   at most one) gets 400 (`HTTP1RequestHeadHandler`, which it puts in front).
///
/// Refusals carry `X-Request-Id` and write an access-log line. Everything is answered in the
/// order it was asked (RFC 9112 §9.3.2): a refusal or a `100 Continue` for a pipelined request
/// waits for the responses owed before it. Closing shuts the output only and lets the client
/// close, so that a body still arriving does not turn the close into a reset that could destroy
/// the answer before the client reads it.
///
/// One handler rather than one per job: each handler costs every request part a call.
final class HTTPGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private struct Refusal {
        var error: CountersignError
        var method: HTTPRequest.Method?
        /// When the service had the request (its head, or bytes that are no request), in
        /// `DispatchTime` uptime nanoseconds, as the router's requests are timed from.
        var arrived = DispatchTime.now().uptimeNanoseconds
    }

    private let logger: Logger
    private let maxBodyBytes: Int
    /// Refusals are counted with the requests the router answers.
    private let metrics: RequestMetrics
    /// Requests passed on whose response has not ended yet.
    private var unanswered = 0
    /// The last request passed on asked for the connection to close after its answer.
    private var closeRequested = false
    /// The last request passed on is still arriving (its end has not been read).
    private var requestOpen = false
    /// ... and its body is over the limit, or of unknown length.
    private var openRequestUnbounded = false
    /// Close once every response owed is written.
    private var closeAfterResponses = false
    /// A refusal waiting for the responses owed before it.
    private var pendingRefusal: Refusal?
    /// A `100 Continue` waiting for the responses owed before its request's.
    private var continueOwed = false
    /// Nothing more is read from this connection.
    private var readingStopped = false
    /// The last response is written and the output shut: nothing more is written.
    private var finished = false

    init(logger: Logger, maxBodyBytes: Int, metrics: RequestMetrics) {
        self.logger = logger
        self.maxBodyBytes = maxBodyBytes
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The version is known only before the codec that turns HTTP/1 parts into HTTP types.
        let pipeline = context.pipeline.syncOperations
        if let codec = try? pipeline.handler(type: HTTP1ToHTTPServerCodec.self) {
            try? pipeline.addHandler(HTTP1RequestHeadHandler(), position: .before(codec))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !readingStopped else { return }
        switch unwrapInboundIn(data) {
        case .head(var request):
            if let refusal = Self.refusal(of: request) {
                refuseWhenAnswered(Refusal(error: refusal, method: request.method), context: context)
                return
            }
            unanswered += 1
            requestOpen = true
            closeRequested = request.headerFields[.connection]?.lowercased() == "close"
            let declaredLength = request.headerFields[.contentLength].flatMap { Int($0) }
            openRequestUnbounded = declaredLength.map { $0 > maxBodyBytes } ?? (request.headerFields[.transferEncoding] != nil)
            guard let expectation = request.headerFields[.expect],
                expectation.split(separator: ",").allSatisfy({ $0.filter { $0 != " " && $0 != "\t" }.lowercased() == "100-continue" })
            else {
                context.fireChannelRead(data)
                return
            }
            if declaredLength.map({ $0 <= maxBodyBytes }) ?? true {
                if unanswered == 1 {
                    context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
                } else {
                    continueOwed = true
                }
            }
            // Answered here: nothing further in should act on it again.
            request.headerFields[.expect] = nil
            context.fireChannelRead(wrapInboundOut(.head(request)))
        case .body:
            context.fireChannelRead(data)
        case .end:
            requestOpen = false
            context.fireChannelRead(data)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let invalidHost = error as? HTTP1RequestHeadHandler.InvalidHostField, !readingStopped {
            refuseWhenAnswered(Refusal(error: CountersignError(.malformedRequest, Self.hostRule), method: invalidHost.method), context: context)
            return
        }
        guard !readingStopped, let parserError = error as? HTTPParserError else {
            if !readingStopped { context.fireErrorCaught(error) }
            return
        }
        if requestOpen {
            // The body's framing broke: its reader answers, and the connection closes after.
            closeAfterResponses = true
            context.fireErrorCaught(error)
            return
        }
        let refusal: CountersignError
        switch parserError {
        case .invalidMethod:
            // Also what a request line that breaks off in its method ("GET" alone) raises.
            refusal = CountersignError(
                .methodNotImplemented,
                "the request line names no method the service implements (GET, HEAD, POST, PUT, PATCH and DELETE), or is broken"
            )
        case .headerOverflow:
            refusal = CountersignError(.headersTooLarge, "the request's header fields are too large")
        default:
            refusal = CountersignError(.malformedRequest, "the request is not well-formed HTTP/1.1")
        }
        refuseWhenAnswered(Refusal(error: refusal, method: nil), context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !finished else {
            // The output is shut; whatever the server still has to say goes unsaid.
            promise?.succeed()
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(var response) where response.status.kind != .informational:
            if response.headerFields[.connection]?.lowercased() == "close" {
                closeAfterResponses = true
            } else if unanswered == 1, closeRequested || (requestOpen && openRequestUnbounded) {
                // Asked to close, or answered before a body it will not read to its end arrived.
                response.headerFields[.connection] = "close"
                closeAfterResponses = true
                context.write(wrapOutboundOut(.head(response)), promise: promise)
                return
            }
            context.write(data, promise: promise)
        case .end:
            unanswered -= 1
            context.write(data, promise: promise)
            if unanswered == 0, let refusal = pendingRefusal {
                refuse(refusal, context: context)
            } else if unanswered == 0, closeAfterResponses {
                finish(context: context)
            } else if unanswered == 1, continueOwed {
                continueOwed = false
                context.write(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            }
        default:
            context.write(data, promise: promise)
        }
    }

    private static let hostRule = "a request needs exactly one Host header field, a host with an optional port (HTTP/1.0 may leave it out)"

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

    /// Stops reading, and refuses once the responses owed are written.
    private func refuseWhenAnswered(_ refusal: Refusal, context: ChannelHandlerContext) {
        readingStopped = true
        if unanswered == 0 {
            refuse(refusal, context: context)
        } else {
            pendingRefusal = refusal
        }
    }

    /// Writes the refusal and closes.
    private func refuse(_ refusal: Refusal, context: ChannelHandlerContext) {
        let requestID = RequestID()
        var head = HTTPResponse(
            status: refusal.error.code.kind.status,
            headerFields: [.connection: "close", RequestObservationMiddleware.requestIDField: requestID.description]
        )
        // From the request's arrival to its answer. Pipelined behind others, a refusal's time
        // includes the wait for their answers, which a routed request's (begun when a handler
        // takes it) does not.
        let elapsed = DispatchTime.now().uptimeNanoseconds - refusal.arrived
        logger.info(
            "request",
            metadata: [
                "hb.request.id": .stringConvertible(requestID), "method": .string(refusal.method?.rawValue ?? "unparsable"),
                "route": "unmatched", "status": .stringConvertible(head.status.code), "code": .string(refusal.error.code.rawValue),
                "duration_ms": RequestObservationMiddleware.duration(nanoseconds: elapsed),
            ]
        )
        // SwiftNIO's response encoder frames every answer to CONNECT without a body (though only a
        // 2xx must be, RFC 9110 §9.3.6) and drops one written: the status says it all.
        if refusal.method == .connect {
            context.write(wrapOutboundOut(.head(head)), promise: nil)
        } else {
            let body = ByteBuffer(bytes: JSONResponse.errorBody(refusal.error))
            head.headerFields[.contentType] = "application/json; charset=utf-8"
            head.headerFields[.contentLength] = String(body.readableBytes)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: nil)
        }
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        // Sampled with its real time: an operator reads the histogram as how long clients
        // waited, a refusal sampled as instant would drag its series' quantiles to zero, and one
        // left unsampled would make the histogram's count disagree with
        // countersign_http_requests_total.
        metrics.record(route: "unmatched", method: RequestMetrics.label(refusal.method), status: head.status.code, nanoseconds: elapsed)
        finish(context: context)
    }

    /// Flushes what is written, then shuts the output; the client's close (or the idle timeout)
    /// ends the connection, and what it still sends is dropped.
    private func finish(context: ChannelHandlerContext) {
        finished = true
        readingStopped = true
        context.flush()
        context.close(mode: .output, promise: nil)
    }
}


/// Applies what only the HTTP/1 version and the raw header lines say, before the codec drops
/// them: an HTTP/1.0 request without `Connection: keep-alive` closes its connection after its
/// answer (RFC 9112 §9.3), and its `Expect` is ignored (RFC 9110 §10.1.1); a request with more
/// than one `Host` field line, an HTTP/1.1 request with none, or a `Host` that is no host and
/// port is refused (RFC 9112 §3.2), since the codec would keep the first `Host` silently and
/// a proxy in front may have read another.
final class HTTP1RequestHeadHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// Passed to `HTTPGuardHandler`, which refuses the request.
    struct InvalidHostField: Error {
        var method: HTTPRequest.Method?
    }

    /// The request was refused: nothing more from this connection is passed on.
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let hosts = head.headers["host"]
        guard hosts.count == 1 ? Self.isHostAndPort(hosts[0]) : hosts.isEmpty && head.version == .http1_0 else {
            refused = true
            context.fireErrorCaught(InvalidHostField(method: HTTPRequest.Method(head.method.rawValue)))
            return
        }
        if head.version == .http1_0 {
            head.headers.remove(name: "expect")
            if !head.headers["connection"].contains(where: { $0.lowercased() == "keep-alive" }) {
                head.headers.replaceOrAdd(name: "connection", value: "close")
            }
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// `uri-host [ ":" port ]` (RFC 3986 §3.2.2): the characters of a reg-name, an IPv4 address or
    /// an IP literal, and a colon. Empty is allowed, for a target without an authority.
    private static func isHostAndPort(_ value: String) -> Bool {
        value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "-._~%!$&'()*+,;=:[]".utf8.contains(byte)
            }
        }
    }
}
