import Foundation
import NIOCore
import NIOHTTP1

/// Serves HTTP/1.1 requests on one connection, one at a time (NIO's pipelining helper holds the next request until
/// the response to this one is written): reads the request, refusing a body over the route's limit as it arrives,
/// has the route answer, writes the response, and keeps the connection when the client wants it kept.
final class PushHTTP1Handler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// How long a connection whose request was refused mid-body goes on being read (and the bytes dropped) after the
    /// response, so the client reads the response instead of a reset.
    static let lingerTime = TimeAmount.seconds(2)

    private struct Exchange {
        var version: HTTPVersion
        var keepAlive: Bool
    }

    private enum State {
        case idle
        case readingBody(any PushRoute, PushHTTPRequest, ByteBuffer, Exchange)
        /// The answer does not need the body (no route serves the path): drop it, answer at its end.
        case discardingBody(PushHTTPResponse, Exchange)
        /// The route is answering, or the response is being written.
        case answering
        /// The response is out and the connection closes; whatever still arrives is dropped.
        case closing
    }

    private let router: PushRouter
    private let scheme: String
    private var state = State.idle

    /// `scheme` is the connection's: `https` over TLS, else `http`.
    init(router: PushRouter, scheme: String) {
        self.router = router
        self.scheme = scheme
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): receivedHead(context: context, head)
        case .body(let bytes): receivedBody(context: context, bytes)
        case .end: receivedEnd(context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent, case .idle = state {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func receivedHead(context: ChannelHandlerContext, _ head: HTTPRequestHead) {
        guard case .idle = state else { return }
        var fields: [PushHeaderField] = []
        fields.reserveCapacity(head.headers.count)
        var host: String?
        for (name, value) in head.headers {
            let lowercased = name.lowercased()
            if lowercased == "host", host == nil { host = value }
            fields.append(PushHeaderField(lowercased, value))
        }
        let request = PushHTTPRequest(
            method: head.method.rawValue, path: head.uri, headers: fields, body: Data(), authority: host ?? "", scheme: scheme)
        let exchange = Exchange(version: head.version, keepAlive: head.isKeepAlive)
        guard let route = router.route(for: head.uri) else {
            state = .discardingBody(router.notFound(request), exchange)
            return
        }
        if let declared = head.headers.first(name: "content-length").flatMap(Int.init), declared > route.maximumBodyBytes {
            refuse(context: context, route.bodyTooLarge(request), exchange)
            return
        }
        if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
            let informational = HTTPResponseHead(version: head.version, status: .continue)
            context.writeAndFlush(wrapOutboundOut(.head(informational)), promise: nil)
        }
        state = .readingBody(route, request, context.channel.allocator.buffer(capacity: 0), exchange)
    }

    private func receivedBody(context: ChannelHandlerContext, _ bytes: ByteBuffer) {
        guard case .readingBody(let route, let request, var body, let exchange) = state else { return }
        state = .answering  // Release `body` from the state while it grows (no copy on write).
        guard body.readableBytes + bytes.readableBytes <= route.maximumBodyBytes else {
            refuse(context: context, route.bodyTooLarge(request), exchange)
            return
        }
        var bytes = bytes
        body.writeBuffer(&bytes)
        state = .readingBody(route, request, body, exchange)
    }

    private func receivedEnd(context: ChannelHandlerContext) {
        switch state {
        case .readingBody(let route, var complete, let body, let exchange):
            state = .answering
            complete.body = Data(body.readableBytesView)
            let request = complete
            let promise = context.eventLoop.makePromise(of: PushHTTPResponse.self)
            promise.completeWithTask { await route.handle(request) }
            promise.futureResult.assumeIsolated().whenSuccess { response in
                self.respond(context: context, response, exchange)
            }
        case .discardingBody(let response, let exchange):
            state = .answering
            respond(context: context, response, exchange)
        case .idle, .answering, .closing:
            break
        }
    }

    /// Answers without reading the rest of the request, then closes: the response goes out, the sending side of the
    /// connection is shut, and what the client still sends is read and dropped for ``lingerTime`` (or until it
    /// closes), so the client is not reset before it reads the response.
    private func refuse(context: ChannelHandlerContext, _ response: PushHTTPResponse, _ exchange: Exchange) {
        state = .closing
        var closing = exchange
        closing.keepAlive = false
        write(context: context, response, closing).assumeIsolated().whenComplete { _ in
            context.close(mode: .output, promise: nil)
            let channel = context.channel
            let forced = channel.eventLoop.scheduleTask(in: Self.lingerTime) { channel.close(promise: nil) }
            channel.closeFuture.whenComplete { _ in forced.cancel() }
        }
    }

    private func respond(context: ChannelHandlerContext, _ response: PushHTTPResponse, _ exchange: Exchange) {
        // The state changes before the write: writing the end lets the pipelining helper hand over the next request.
        if exchange.keepAlive {
            state = .idle
            write(context: context, response, exchange)
        } else {
            state = .closing
            write(context: context, response, exchange).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// Writes `response`; the future completes when its end is written.
    @discardableResult
    private func write(context: ChannelHandlerContext, _ response: PushHTTPResponse, _ exchange: Exchange) -> EventLoopFuture<Void> {
        var headers = HTTPHeaders()
        for field in response.headers {
            headers.add(name: field.name, value: field.value)
        }
        headers.replaceOrAdd(name: "content-length", value: String(response.body.count))
        if !exchange.keepAlive {
            headers.replaceOrAdd(name: "connection", value: "close")
        }
        let head = HTTPResponseHead(version: exchange.version, status: .init(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        return written.futureResult
    }
}
