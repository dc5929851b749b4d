import Dispatch
import Glibc
import Synchronization

/// A client connection to a D-Bus message bus: connects, authenticates, says `Hello`, sends method calls, and reads
/// on a thread of its own, where it hands each reply to the handler of its call and each signal to `onMessage`.
///
/// Writes are serialised under a lock, each a whole message, and give up after `timeout` so that a bus that stops
/// reading cannot block a caller for ever (the connection is then ended: a half-written message cannot be taken back).
final class DBusConnection: Sendable {
    /// Receives the reply to one call: the method return, or `.errorReply` for an error message, or `.disconnected`
    /// when the connection ended first. Runs on the reader thread.
    typealias ReplyHandler = @Sendable (Result<DBusMessage, DesktopNotificationsError>) -> Void

    /// The writing side, behind the write lock.
    private struct Writer {
        var open = true
        var closedByClient = false
        var endReason = ""
        var nextSerial: UInt32 = 1
    }

    /// The socket: shut down by `close()` to wake the reader, closed by the reader when it ends (under the write lock,
    /// after which no writer touches it).
    private let fd: Int32
    private let writer = Mutex(Writer())
    private let replies = Mutex<[UInt32: ReplyHandler]>([:])
    private let reader = Mutex<WatcherThread?>(nil)
    private let name = Mutex("")
    private let timeout: Duration
    private let onMessage: @Sendable (DBusMessage) -> Void
    private let onEnd: @Sendable (String) -> Void

    /// Connects to `address` and says `Hello`, each step within `timeout`.
    /// - Parameters:
    ///   - onMessage: every signal, on the reader thread.
    ///   - onEnd: once, on the reader thread, when the connection ends other than by `close()`, with why.
    init(
        address: String, timeout: Duration = .seconds(5), onMessage: @escaping @Sendable (DBusMessage) -> Void,
        onEnd: @escaping @Sendable (String) -> Void
    ) throws(DesktopNotificationsError) {
        let fd = try DBusTransport.connect(address: address, sendTimeout: timeout)
        let early: [UInt8]
        do {
            early = try DBusTransport.authenticate(fd, timeout: timeout)
        } catch {
            Glibc.close(fd)
            throw error
        }
        self.fd = fd
        self.timeout = timeout
        self.onMessage = onMessage
        self.onEnd = onEnd
        do {
            let thread = try WatcherThread(name: "offstage-dbus") { [self] in readLoop(early) }
            reader.withLock { $0 = thread }
        } catch {
            Glibc.close(fd)
            throw .systemCallFailed(call: "pthread_create", errno: (error as? ProcessControlError)?.errno ?? EAGAIN)
        }
        do throws(DesktopNotificationsError) {
            let hello = DBusMessage.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "Hello")
            let reply = try call(hello, timeout: timeout)
            guard case .string(let unique)? = reply.body.first else {
                throw .unexpectedReply(method: "Hello", signature: reply.signature)
            }
            name.withLock { $0 = unique }
        } catch {
            close()
            throw error
        }
    }

    /// The unique name the bus gave this connection (":1.42").
    var uniqueName: String { name.withLock { $0 } }

    /// Sends `message` with the next serial; `onReply`, when given, receives its reply. Returns the serial.
    ///
    /// - Throws: `.disconnected` when the connection has ended or the write failed, `.unsupportedValue` when the
    ///   message cannot be marshalled.
    @discardableResult
    func send(_ message: DBusMessage, onReply: ReplyHandler? = nil) throws(DesktopNotificationsError) -> UInt32 {
        try writer.withLock { writer throws(DesktopNotificationsError) -> UInt32 in
            guard writer.open else {
                throw .disconnected(writer.closedByClient ? "closed by this client" : writer.endReason)
            }
            let serial = writer.nextSerial
            let bytes = try message.marshal(serial: serial)
            writer.nextSerial = serial == .max ? 1 : serial + 1
            // Registered before the write: the reply can arrive before `send` returns.
            if let onReply { replies.withLock { $0[serial] = onReply } }
            let code = DBusTransport.sendAll(fd, bytes)
            guard code == 0 else {
                if onReply != nil { _ = replies.withLock { $0.removeValue(forKey: serial) } }
                // Part of the message may be out: the stream is lost. The reader sees the shutdown and ends it.
                shutdown(fd, Int32(SHUT_RDWR))
                throw .disconnected("writing to the bus failed: \(DBusTransport.describe(code))")
            }
            return serial
        }
    }

    /// Sends `message` and waits up to `timeout` for its reply.
    ///
    /// - Throws: `.errorReply` for an error reply, `.timedOut`, `.disconnected`, and `.calledOnEventsThread` when
    ///   called on the reader thread (from `onMessage` or a reply handler), where it would wait for itself.
    func call(_ message: DBusMessage, timeout: Duration) throws(DesktopNotificationsError) -> DBusMessage {
        let method = message.member ?? "a method"
        if reader.withLock({ $0?.isCurrent ?? false }) { throw .calledOnEventsThread(method: method) }
        let waiter = ReplyWaiter()
        let serial = try send(message) { waiter.deliver($0) }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds =
            seconds >= Int64.max / 1_000_000_000
            ? Int64.max : max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        if waiter.semaphore.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .timedOut {
            // A reply that comes later finds no handler and is dropped; one being delivered now still counts.
            _ = replies.withLock { $0.removeValue(forKey: serial) }
        }
        guard let result = waiter.result else { throw .timedOut(method: method, timeout: timeout) }
        return try result.get()
    }

    /// Ends the connection: wakes the reader by shutting the socket down, and waits for it to finish (unless called
    /// on the reader thread). Replies still awaited get `.disconnected`; `onEnd` is not called. Idempotent.
    func close() {
        let thread = writer.withLock { writer -> WatcherThread? in
            if writer.open {
                writer.open = false
                writer.closedByClient = true
                shutdown(fd, Int32(SHUT_RDWR))
            }
            // Taken out so that only one caller joins it.
            return reader.withLock { thread in
                defer { thread = nil }
                return thread
            }
        }
        guard let thread else { return }
        // On the reader thread itself (close() from a handler) it cannot wait for itself: it ends on its own.
        if thread.isCurrent { pthread_detach(thread.handle) } else { thread.join() }
    }

    // MARK: - Reading

    /// The reader thread: frames messages out of the stream and dispatches each, until the stream ends or breaks.
    private func readLoop(_ early: [UInt8]) {
        var buffer = early
        var reason = "the bus closed the connection"
        var chunk = [UInt8](repeating: 0, count: 65_536)
        reading: while true {
            while buffer.count >= DBusMessage.fixedHeaderLength {
                do {
                    let length = try DBusMessage.frameLength(buffer[...])
                    guard buffer.count >= length else { break }
                    let message = try DBusMessage.unmarshal(Array(buffer[..<length]))
                    buffer.removeFirst(length)
                    dispatch(message)
                } catch {
                    reason = error.description
                    break reading
                }
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
            } else if count == 0 {
                break
            } else if errno != EINTR {
                reason = "reading from the bus failed: \(DBusTransport.describe(errno))"
                break
            }
        }
        finish(reason)
    }

    /// Closes the socket, fails the replies still awaited, and tells `onEnd` unless the client closed.
    private func finish(_ reason: String) {
        let byClient = writer.withLock { writer in
            writer.open = false
            writer.endReason = reason
            Glibc.close(fd)
            return writer.closedByClient
        }
        let pending = replies.withLock { replies in
            defer { replies = [:] }
            return replies.sorted { $0.key < $1.key }
        }
        let error = DesktopNotificationsError.disconnected(byClient ? "closed by this client" : reason)
        for (_, handler) in pending { handler(.failure(error)) }
        if !byClient { onEnd(reason) }
    }

    private func dispatch(_ message: DBusMessage) {
        switch message.kind {
        case .methodReturn, .error:
            guard let serial = message.replySerial, let handler = replies.withLock({ $0.removeValue(forKey: serial) })
            else { return }
            if message.kind == .error {
                let name = message.errorName ?? "org.freedesktop.DBus.Error.Failed"
                handler(.failure(.errorReply(name: name, message: message.body.first?.text ?? "")))
            } else {
                handler(.success(message))
            }
        case .signal:
            onMessage(message)
        case .methodCall:
            answer(message)
        }
    }

    /// Peers may call any connection: `Ping` is answered as the specification asks, anything else as unknown.
    private func answer(_ call: DBusMessage) {
        guard !call.flags.contains(.noReplyExpected) else { return }
        var reply = DBusMessage(kind: .methodReturn, replySerial: call.serial, destination: call.sender)
        if call.interface != "org.freedesktop.DBus.Peer" || call.member != "Ping" {
            reply.kind = .error
            reply.errorName = "org.freedesktop.DBus.Error.UnknownMethod"
            reply.body = [.string("\(call.member ?? "") is not a method of this connection")]
        }
        _ = try? send(reply)
    }
}

/// Where `call` waits for its reply.
private final class ReplyWaiter: Sendable {
    let semaphore = DispatchSemaphore(value: 0)
    private let stored = Mutex<Result<DBusMessage, DesktopNotificationsError>?>(nil)

    var result: Result<DBusMessage, DesktopNotificationsError>? { stored.withLock { $0 } }

    func deliver(_ result: Result<DBusMessage, DesktopNotificationsError>) {
        stored.withLock { $0 = result }
        semaphore.signal()
    }
}
