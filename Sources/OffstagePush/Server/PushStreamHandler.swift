import Foundation
import NIOCore
import NIOHTTP2

/// Serves one HTTP/2 stream: reads the request (refusing a body over the route's limit as it arrives), has the
/// route answer it, and writes the response.
final class PushStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private enum State {
        case awaitingHeaders
        case readingBody(any PushRoute, PushHTTPRequest, ByteBuffer)
        /// The route is answering, or the response is written.
        case answered
    }

    private let router: PushRouter
    private let scheme: String
    private var state = State.awaitingHeaders

    /// `scheme` is the connection's: `https` over TLS, else `http`.
    init(router: PushRouter, scheme: String) {
        self.router = router
        self.scheme = scheme
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            receivedHeaders(context: context, headers)
        case .data(let data):
            guard case .byteBuffer(let bytes) = data.data else { return }
            receivedData(context: context, bytes, endStream: data.endStream)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func receivedHeaders(context: ChannelHandlerContext, _ headers: HTTP2Frame.FramePayload.Headers) {
        let endStream = headers.endStream
        switch state {
        case .awaitingHeaders:
            var method = ""
            var path = ""
            var authority: String?
            var host: String?
            var fields: [PushHeaderField] = []
            fields.reserveCapacity(headers.headers.count)
            var contentLength: Int?
            for (name, value, _) in headers.headers {
                if name.first == ":" {
                    if name == ":method" {
                        method = value
                    } else if name == ":path" {
                        path = value
                    } else if name == ":authority" {
                        authority = value
                    }
                } else {
                    if name == "content-length" { contentLength = Int(value) } else if name == "host" { host = value }
                    fields.append(PushHeaderField(name, value))
                }
            }
            let request = PushHTTPRequest(
                method: method, path: path, headers: fields, body: Data(), authority: authority ?? host ?? "", scheme: scheme)
            guard let route = router.route(for: path) else {
                refuse(context: context, router.notFound(request), requestComplete: endStream)
                return
            }
            if let contentLength, contentLength > route.maximumBodyBytes {
                refuse(context: context, route.bodyTooLarge(request), requestComplete: endStream)
                return
            }
            if endStream {
                dispatch(context: context, route, request)
            } else {
                state = .readingBody(route, request, context.channel.allocator.buffer(capacity: 0))
            }
        case .readingBody(let route, var request, let body) where endStream:
            // Trailers end the request; their fields are not part of the provider API.
            request.body = Data(body.readableBytesView)
            dispatch(context: context, route, request)
        case .readingBody, .answered:
            break
        }
    }

    private func receivedData(context: ChannelHandlerContext, _ bytes: ByteBuffer, endStream: Bool) {
        guard case .readingBody(let route, var request, var body) = state else { return }
        state = .answered  // Release `body` from the state while it grows (no copy on write).
        guard body.readableBytes + bytes.readableBytes <= route.maximumBodyBytes else {
            refuse(context: context, route.bodyTooLarge(request), requestComplete: endStream)
            return
        }
        var bytes = bytes
        body.writeBuffer(&bytes)
        if endStream {
            request.body = Data(body.readableBytesView)
            dispatch(context: context, route, request)
        } else {
            state = .readingBody(route, request, body)
        }
    }

    /// Answers without reading the rest of the request; when the client is still sending, the stream is reset after
    /// the response so it stops.
    private func refuse(context: ChannelHandlerContext, _ response: PushHTTPResponse, requestComplete: Bool) {
        state = .answered
        let written = write(context: context, response)
        if !requestComplete {
            // Only once the response is out: a reset drops the stream's frames still waiting to be written.
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    private func dispatch(context: ChannelHandlerContext, _ route: any PushRoute, _ request: PushHTTPRequest) {
        state = .answered
        let promise = context.eventLoop.makePromise(of: PushHTTPResponse.self)
        promise.completeWithTask { await route.handle(request) }
        promise.futureResult.assumeIsolated().whenSuccess { response in
            self.write(context: context, response)
        }
    }

    /// Writes `response`; the future completes when its last frame is written.
    @discardableResult
    private func write(context: ChannelHandlerContext, _ response: PushHTTPResponse) -> EventLoopFuture<Void> {
        let written = context.eventLoop.makePromise(of: Void.self)
        var fields: [(String, String)] = [(":status", String(response.status))]
        fields.reserveCapacity(response.headers.count + 2)
        for field in response.headers {
            fields.append((field.name, field.value))
        }
        if response.body.isEmpty {
            context.write(wrapOutboundOut(.headers(.init(headers: .init(fields), endStream: true))), promise: written)
        } else {
            fields.append(("content-length", String(response.body.count)))
            context.write(wrapOutboundOut(.headers(.init(headers: .init(fields)))), promise: nil)
            let body = context.channel.allocator.buffer(bytes: response.body)
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: written)
        }
        context.flush()
        return written.futureResult
    }
}

/// Closes a connection on any error that reaches the end of its pipeline: malformed HTTP/2, a bad preface, a failed
/// TLS handshake. Only that connection is closed; the server goes on serving the others.
final class ConnectionErrorHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
