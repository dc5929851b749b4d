import Foundation
import NIOCore
import OffstageProtocol

/// Serves the Varlink calls of one connection, on the server's event loop.
///
/// Messages (already split by `VarlinkFrameDecoder`) are queued and dispatched one at a time: a call is handed to its
/// handler only once the one before has been answered. That is what keeps replies in call order when handlers answer
/// later, and it is how sd-varlink behaves too. While many calls are queued, reading from the socket pauses.
///
/// Writes are flushed once per batch: all replies produced while handling one read (several pipelined calls, say)
/// go out in one flush, at `channelReadComplete`; a reply sent later from outside a read is flushed at once.
///
/// A message that is not a valid call (bad JSON, not an object, no `method`) or too long is answered
/// `io.offstage.Protocol.MalformedMessage` or `MessageTooLarge` and the connection is closed after the answer is
/// written: past such a message the framing cannot be trusted.
final class VarlinkConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Pending {
        case message(ByteBuffer)
        case tooLarge(limit: Int)
    }

    private let router: VarlinkRouter
    private let callContext: VarlinkCallContext
    private let onClosed: @Sendable (VarlinkCallContext) -> Void
    private let maximumQueuedMessages: Int

    private var context: ChannelHandlerContext?
    private var queue = CircularBuffer<Pending>(initialCapacity: 4)
    /// The call being answered; the queue waits while there is one.
    private var current: VarlinkCallState?
    private var isProcessingQueue = false
    /// Inside a `channelRead`…`channelReadComplete` burst: flushing waits for its end.
    private var inReadBurst = false
    /// Nesting depth of code that may write several replies: flushing waits until it unwinds.
    private var batchDepth = 0
    private var needsFlush = false
    /// A `read()` held back because the queue is full.
    private var isReadHeld = false
    /// The client shut down its sending side: close once everything received is answered.
    private var isInputClosed = false
    /// Closing after a protocol error or end of input: nothing more is dispatched.
    private var isClosing = false
    /// The channel is inactive.
    private(set) var isClosed = false

    /// Final replies wait for the future it returns, if any.
    let replyGate: VarlinkReplyGate?

    init(
        router: VarlinkRouter,
        callContext: VarlinkCallContext,
        maximumQueuedMessages: Int,
        replyGate: VarlinkReplyGate? = nil,
        onClosed: @escaping @Sendable (VarlinkCallContext) -> Void
    ) {
        self.replyGate = replyGate
        self.router = router
        self.callContext = callContext
        self.maximumQueuedMessages = maximumQueuedMessages
        self.onClosed = onClosed
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        connectionDidClose()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        inReadBurst = true
        queue.append(.message(unwrapInboundIn(data)))
        processQueue()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        inReadBurst = false
        flushIfNeeded()
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? VarlinkMessageTooLargeError {
            // Answered in turn, after the calls received before it.
            queue.append(.tooLarge(limit: error.limit))
            processQueue()
        } else if error is ByteToMessageDecoderError {
            // Bytes that arrived after the oversize message, while the answer to it is on its way: ignore.
        } else {
            // A socket error (a reset, say): the connection is gone.
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            isInputClosed = true
            processQueue()
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        connectionDidClose()
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        if isClosing { return }
        if queue.count >= maximumQueuedMessages {
            isReadHeld = true
        } else {
            context.read()
        }
    }

    // MARK: Dispatch

    private func processQueue() {
        guard !isProcessingQueue else { return }
        isProcessingQueue = true
        batchDepth += 1
        while current == nil, !isClosing, !isClosed, let item = queue.popFirst() {
            switch item {
            case .message(let buffer): dispatch(buffer)
            case .tooLarge(let limit):
                let error = VarlinkError.messageTooLarge(limit: limit)
                router.unrouted?.called()
                router.unrouted?.failed(error.name)
                closeAfter(error)
            }
        }
        isProcessingQueue = false
        if isReadHeld, queue.count < maximumQueuedMessages, !isClosing, let context {
            isReadHeld = false
            context.read()
        }
        if isInputClosed, !isClosing, !isClosed, current == nil, queue.isEmpty {
            closeAfter(nil)
        }
        batchDepth -= 1
        flushIfNeeded()
    }

    private func dispatch(_ buffer: ByteBuffer) {
        // One copy, into the form Foundation's decoder reads; the request keeps it for `decodeParameters`.
        let message = buffer.withUnsafeReadableBytes { Data($0) }
        let received: VarlinkReceivedCall
        do {
            received = try VarlinkCodec.decodeCall(message)
        } catch {
            router.unrouted?.called()
            router.unrouted?.failed(error.name)
            closeAfter(error)
            return
        }
        let header = received.header
        let route: VarlinkRouter.Route
        switch router.route(header) {
        case .success(let found):
            route = found
        case .failure(let error):
            // Counted under `unknown`: the method name is the caller's text, not one the interfaces declare.
            router.unrouted?.called()
            let call = VarlinkCallState(header: header, connection: self, metrics: router.unrouted)
            if !header.oneway { current = call }
            _ = call.sendError(error)
            return
        }
        route.metrics?.called()
        let call = VarlinkCallState(header: header, connection: self, metrics: route.metrics)
        if !header.oneway { current = call }
        if header.upgrade {
            _ = call.sendError(.upgradeNotSupported(method: header.method))
            return
        }
        let handler = route.handler
        let responder = VarlinkResponder(call: call, eventLoop: callContext.eventLoop)
        do {
            try handler(callContext, VarlinkRequest(received), responder)
        } catch let error as VarlinkError {
            responder.fail(error)
        } catch {
            responder.fail(.internalError(reason: "\(header.method) failed: \(error)"))
        }
    }

    // MARK: Writing

    /// Writes `message` plus its NUL for `call`; with `final`, the call is over and the next one may be dispatched.
    func write(_ message: Data, for call: VarlinkCallState, final: Bool) -> Bool {
        if final, current === call { current = nil }
        guard let context, !isClosed, !isClosing else { return false }
        batchDepth += 1
        var buffer = context.channel.allocator.buffer(capacity: message.count + 1)
        buffer.writeBytes(message)
        buffer.writeInteger(UInt8(0))
        context.write(wrapOutboundOut(buffer), promise: nil)
        needsFlush = true
        if final { processQueue() }
        batchDepth -= 1
        flushIfNeeded()
        return true
    }

    private func flushIfNeeded() {
        guard needsFlush, batchDepth == 0, !inReadBurst, let context else { return }
        needsFlush = false
        context.flush()
    }

    /// Stops dispatching, writes `error` (if any), and closes the connection once everything written has gone out.
    private func closeAfter(_ error: VarlinkError?) {
        guard let context, !isClosing else { return }
        isClosing = true
        queue.removeAll()
        if let error {
            let message = VarlinkCodec.encodeError(error)
            var buffer = context.channel.allocator.buffer(capacity: message.count + 1)
            buffer.writeBytes(message)
            buffer.writeInteger(UInt8(0))
            context.write(wrapOutboundOut(buffer), promise: nil)
        }
        // An empty write completes after every write before it: closing then loses no reply.
        needsFlush = false
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    private func connectionDidClose() {
        guard !isClosed else { return }
        isClosed = true
        queue.removeAll()
        if let call = current {
            current = nil
            call.connectionClosed()
        }
        onClosed(callContext)
    }
}
