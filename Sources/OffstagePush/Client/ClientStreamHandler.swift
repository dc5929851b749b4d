import Foundation
import NIOCore
import NIOHTTP2

/// One request of the provider client: writes it when its stream is active and completes the promise with the
/// response (as soon as the response ends, even if the server then resets the stream).
final class ClientStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    struct Request: Sendable {
        var headers: [(String, String)]
        var body: Data
        /// Sent after the body when not empty.
        var trailers: [(String, String)] = []
    }

    private let request: Request
    private let response: EventLoopPromise<APNsResponse>
    private var written = false
    private var finished = false
    private var status: Int?
    private var apnsID: String?
    private var body = Data()

    init(request: Request, response: EventLoopPromise<APNsResponse>) {
        self.request = request
        self.response = response
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { writeRequest(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        writeRequest(context: context)
        context.fireChannelActive()
    }

    private func writeRequest(context: ChannelHandlerContext) {
        guard !written else { return }
        written = true
        let hasTrailers = !request.trailers.isEmpty
        let endsWithHeaders = request.body.isEmpty && !hasTrailers
        context.write(wrapOutboundOut(.headers(.init(headers: .init(request.headers), endStream: endsWithHeaders))), promise: nil)
        if !request.body.isEmpty {
            let bytes = context.channel.allocator.buffer(bytes: request.body)
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(bytes), endStream: !hasTrailers))), promise: nil)
        }
        if hasTrailers {
            context.write(wrapOutboundOut(.headers(.init(headers: .init(request.trailers), endStream: true))), promise: nil)
        }
        context.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            for (name, value, _) in headers.headers {
                if name == ":status" {
                    status = Int(value)
                } else if name == APNsHeaderName.id {
                    apnsID = value
                }
            }
            if headers.endStream { finish(context: context) }
        case .data(let data):
            if case .byteBuffer(let bytes) = data.data { body.append(contentsOf: bytes.readableBytesView) }
            if data.endStream { finish(context: context) }
        default:
            break
        }
    }

    private func finish(context: ChannelHandlerContext) {
        guard !finished else { return }
        finished = true
        if let status {
            response.succeed(APNsResponse(status: status, apnsID: apnsID, body: body))
        } else {
            response.fail(ProviderClientError(description: "The push gateway ended the stream without a :status; it is not an APNs server."))
        }
        // No close here: the stream channel closes itself now that both sides ended. Closing it first can race the
        // stream's closed event and send a RST_STREAM, and servers (NIO's included) drop connections that send many.
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(ProviderClientError(description: "The stream to the push gateway failed (\(error)); retry the push."))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(ProviderClientError(description: "The push gateway closed the stream before answering; retry the push."))
        context.fireChannelInactive()
    }

    private func fail(_ error: ProviderClientError) {
        guard !finished else { return }
        finished = true
        response.fail(error)
    }
}
