import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` (RFC 9110 §10.1.1) with an interim `100 Continue`, so that a
/// client holding back a large body (curl does above 1 MiB, and for a second at most) sends it
/// at once. A body declared larger than the service takes gets no 100: its request is refused
/// with 413 without the body ever being sent.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private let maxBodyBytes: Int

    init(maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var request) = unwrapInboundIn(data), let expectation = request.headerFields[.expect],
            expectation.lowercased() == "100-continue"
        else {
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
}
