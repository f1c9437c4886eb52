import CountersignCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers bytes that are not an HTTP/1.1 request (an unknown method, a broken request line or
/// header, headers over the limit) with the service's JSON error, `X-Request-Id` and an access-log
/// line, then closes the connection, where the server alone would send an empty 400.
///
/// Only between requests: an error inside a request (its body's framing, say) reaches the
/// handler reading that body, which answers `malformed_body`, and a response still owed to an
/// earlier request must not be overtaken.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let logger: Logger
    /// Requests whose head arrived and whose response has not ended yet.
    private var unanswered = 0

    init(logger: Logger) {
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { unanswered += 1 }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { unanswered -= 1 }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError, unanswered == 0 else {
            context.fireErrorCaught(error)
            return
        }
        let refusal: CountersignError
        switch parserError {
        case .invalidMethod:
            refusal = CountersignError(.malformedRequest, "the request method is not one HTTP defines")
        case .headerOverflow:
            refusal = CountersignError(.headersTooLarge, "the request's header fields are too large")
        default:
            refusal = CountersignError(.malformedRequest, "the request is not well-formed HTTP/1.1")
        }
        let body = ByteBuffer(bytes: JSONResponse.errorBody(refusal))
        let requestID = RequestID()
        let head = HTTPResponse(
            status: refusal.code.kind.status,
            headerFields: [
                .contentType: "application/json; charset=utf-8",
                .contentLength: String(body.readableBytes),
                .connection: "close",
                RequestObservationMiddleware.requestIDField: requestID.description,
            ]
        )
        logger.info(
            "request",
            metadata: [
                "hb.request.id": .stringConvertible(requestID), "route": "unparsable", "status": .stringConvertible(head.status.code),
                "code": .string(refusal.code.rawValue),
            ]
        )
        unanswered = 1
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}
