import Foundation
import NIOCore
import OffstageProtocol

/// Returns a future that final replies must wait for, or nil to send them at once. Called on the event loop.
public typealias VarlinkReplyGate = @Sendable () -> EventLoopFuture<Void>?

/// Answers one Varlink call: once with `reply` or `fail`, or as a stream with `replyMore` followed by a final `reply`
/// or `fail`.
///
/// A handler may answer at once or keep the responder and answer later, for example to push events down a `more`
/// stream for as long as the client stays connected. Every method must be called on the server's event loop
/// (`eventLoop`), the loop the handler ran on; calling from elsewhere is a precondition failure. Keeping the
/// responder is safe: after the call is answered, or after the connection closed, answers are dropped and the methods
/// return `false`.
///
/// Replies go out in call order: a connection works on one call at a time, so the next call on the same connection
/// is only dispatched once this one is answered (a long-lived stream therefore wants its own connection, as in every
/// Varlink implementation).
public final class VarlinkResponder: Sendable {
    /// The call being answered.
    public let header: VarlinkCallHeader
    private let call: NIOLoopBound<VarlinkCallState>

    init(call: VarlinkCallState, eventLoop: any EventLoop) {
        self.header = call.header
        self.call = NIOLoopBound(call, eventLoop: eventLoop)
    }

    /// The event loop all methods must be called on.
    public var eventLoop: any EventLoop { call.eventLoop }

    /// Sends the final reply, with `result` as its parameters.
    ///
    /// - Returns: Whether the reply was sent: `false` when the call was already answered, was `oneway`, or its
    ///   connection is closed.
    @discardableResult
    public func reply<R: Encodable>(_ result: R) -> Bool {
        let call = call.value
        guard !call.isFinished else { return false }
        return call.send(Self.encode(result, continues: false, method: header.method), final: true)
    }

    /// Sends the final reply with no parameters (`{}`).
    @discardableResult
    public func reply() -> Bool {
        reply(VarlinkEmpty())
    }

    /// Sends one reply of a stream, with `"continues": true`; the stream ends with `reply` or `fail`.
    ///
    /// When the caller did not set `"more": true` it expects exactly one reply: this one is sent as the final reply
    /// (without `continues`) and later ones are dropped. Methods that only make sense as streams should call
    /// `VarlinkRequest.requireMore()` first.
    ///
    /// - Returns: Whether the reply was sent.
    @discardableResult
    public func replyMore<R: Encodable>(_ result: R) -> Bool {
        let call = call.value
        guard !call.isFinished else { return false }
        let continues = header.more
        return call.send(Self.encode(result, continues: continues, method: header.method), final: !continues)
    }

    /// Sends `error` as the final reply.
    ///
    /// - Returns: Whether the error was sent.
    @discardableResult
    public func fail(_ error: VarlinkError) -> Bool {
        call.value.sendError(error)
    }

    /// Whether the connection the call came on is closed: nothing more can reach the caller.
    public var isClosed: Bool {
        call.value.connectionIsClosed
    }

    /// Whether nothing more will be sent for this call: it was answered, was `oneway`, or its connection closed.
    public var isFinished: Bool {
        call.value.isFinished
    }

    /// Runs `callback` (on the event loop) when the connection closes before the call has been answered: the
    /// caller went away, e.g. an app whose event stream this is exited. Runs it at once if that already happened.
    /// Never runs it once the call has been answered (a final `reply` or `fail`).
    public func onClose(_ callback: @escaping () -> Void) {
        call.value.onClose(callback)
    }

    private static func encode<R: Encodable>(_ result: R, continues: Bool, method: String) -> Data {
        do {
            return try VarlinkCodec.encodeReply(result, continues: continues)
        } catch {
            // Only a non-finite Double or a custom `encode(to:)` that throws gets here: a bug in the reply type.
            // The client still gets an answer that says what happened instead of waiting forever.
            return VarlinkCodec.encodeError(
                .internalError(reason: "the reply of \(method) could not be encoded: \(error)"))
        }
    }
}

/// The state of one call, owned by the event loop: whether it is answered and who wants to hear if the connection
/// closes first.
final class VarlinkCallState {
    let header: VarlinkCallHeader
    private let connection: VarlinkConnectionHandler
    /// The method's counters, where the server keeps metrics.
    private let metrics: IPCMethodMetrics?
    private(set) var isFinished: Bool
    private var closedBeforeAnswer = false
    /// A oneway call's error was counted (it is never sent, so `isFinished` cannot tell).
    private var onewayErrorCounted = false
    private var closeCallbacks: [() -> Void] = []

    init(header: VarlinkCallHeader, connection: VarlinkConnectionHandler, metrics: IPCMethodMetrics? = nil) {
        self.header = header
        self.connection = connection
        self.metrics = metrics
        // A oneway call wants nothing back: it is finished from the start and every answer is dropped.
        self.isFinished = header.oneway
    }

    var connectionIsClosed: Bool { connection.isClosed }

    /// Sends `message` (JSON text without NUL) for this call; `final` ends the call. A final message waits for the
    /// connection's reply gate, if it holds one back (the call counts as answered at once; the connection's next
    /// call waits for the write, so replies keep their order).
    func send(_ message: Data, final: Bool) -> Bool {
        guard !isFinished else { return false }
        if final {
            isFinished = true
            closeCallbacks = []
            if let held = connection.replyGate?() {
                // The gate's future completes on this event loop, where the call state lives.
                held.assumeIsolated().whenComplete { [self] _ in _ = connection.write(message, for: self, final: true) }
                return !connection.isClosed
            }
        }
        return connection.write(message, for: self, final: final)
    }

    /// Sends `error` as the final answer and counts it against the method (a oneway call's error too: the caller
    /// does not hear of it, but it happened).
    func sendError(_ error: VarlinkError) -> Bool {
        if header.oneway {
            if !onewayErrorCounted {
                onewayErrorCounted = true
                metrics?.failed(error.name)
            }
            return false
        }
        guard !isFinished else { return false }
        metrics?.failed(error.name)
        return send(VarlinkCodec.encodeError(error), final: true)
    }

    /// Marks the call finished without sending anything: its answer was an error the connection handler sent.
    func finishSilently() {
        isFinished = true
        closeCallbacks = []
    }

    func onClose(_ callback: @escaping () -> Void) {
        if closedBeforeAnswer {
            callback()
        } else if !isFinished {
            closeCallbacks.append(callback)
        }
    }

    /// The connection closed while this call was open.
    func connectionClosed() {
        guard !isFinished else { return }
        isFinished = true
        closedBeforeAnswer = true
        let callbacks = closeCallbacks
        closeCallbacks = []
        for callback in callbacks { callback() }
    }
}
