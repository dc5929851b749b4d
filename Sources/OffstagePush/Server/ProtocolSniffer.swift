import NIOCore

/// The HTTP version a connection speaks, told by its first bytes.
enum SniffedProtocol: Sendable {
    /// The client sent the HTTP/2 connection preface.
    case http2
    /// Anything else: an HTTP/1.1 request line (or garbage, which the HTTP/1.1 parser refuses).
    case http1
}

/// Tells HTTP/2 from HTTP/1.1 on a new connection by its first bytes, then has the pipeline configured for that
/// protocol, hands it the bytes read so far and leaves.
///
/// The HTTP/2 client preface is `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n` (RFC 9113 §3.4); no HTTP/1.1 request starts
/// with it. Bytes are compared as they come: the first one that differs from the preface decides HTTP/1.1, all 24
/// matching decide HTTP/2. Over TLS this runs after the handshake, so a client that negotiated `h2` or `http/1.1`
/// with ALPN, or negotiated nothing, is served in the protocol it speaks.
final class ProtocolSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    static let http2Preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private let configure: (ChannelHandlerContext, SniffedProtocol) throws -> Void
    private let maximumIdleTime: TimeAmount?
    private var buffered: ByteBuffer?
    private var decided = false
    private var idleTimer: Scheduled<Void>?

    /// `configure` adds the handlers of the protocol after this one (at the end of the pipeline); a connection that
    /// sends nothing for `maximumIdleTime` is closed.
    init(maximumIdleTime: TimeAmount?, configure: @escaping (ChannelHandlerContext, SniffedProtocol) throws -> Void) {
        self.maximumIdleTime = maximumIdleTime
        self.configure = configure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startIdleTimer(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startIdleTimer(context: context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !decided else {
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        if buffered == nil {
            buffered = bytes
        } else {
            buffered!.writeBuffer(&bytes)
        }
        let seen = buffered!.readableBytesView
        let compared = min(seen.count, Self.http2Preface.count)
        if !seen.prefix(compared).elementsEqual(Self.http2Preface.prefix(compared)) {
            decide(context: context, .http1)
        } else if compared == Self.http2Preface.count {
            decide(context: context, .http2)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if !decided, event is ChannelShouldQuiesceEvent {
            // Nothing is in flight on a connection that has not sent a request yet.
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Before the protocol is known the errors are the TLS handshake's: only this connection is closed.
        guard decided else {
            context.close(promise: nil)
            return
        }
        context.fireErrorCaught(error)
    }

    private func decide(context: ChannelHandlerContext, _ sniffed: SniffedProtocol) {
        decided = true
        idleTimer?.cancel()
        idleTimer = nil
        do {
            try configure(context, sniffed)
        } catch {
            context.close(promise: nil)
            return
        }
        if let bytes = buffered {
            buffered = nil
            context.fireChannelRead(wrapInboundOut(bytes))
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func startIdleTimer(context: ChannelHandlerContext) {
        guard let maximumIdleTime, idleTimer == nil, !decided else { return }
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(in: maximumIdleTime) {
            context.close(promise: nil)
        }
    }
}
