import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A blocking Varlink client over a Unix stream socket, for app processes (through the SDK) and the command line.
///
/// Each call is one write and one read on the caller's thread; there is no event loop, no extra thread and no
/// `FileHandle`. The socket is opened with `SOCK_CLOEXEC`, so processes an app spawns do not inherit it.
///
/// ## Threads
/// A connection may be shared between threads, but it serves one call at a time: Varlink answers calls in order, so a
/// second thread's call waits (on a lock) until the first has its reply. Threads that must not wait for each other
/// should each open their own connection. `close()` may be called from any thread at any time: it wakes a call
/// blocked on the socket, which then throws `VarlinkConnectionError.disconnected`.
///
/// ## Streams
/// `callMore` returns a `VarlinkReplyStream`. Until its last reply has been read, the connection belongs to it and
/// other calls throw `VarlinkConnectionError.busy`; long-lived streams (events, say) want a connection of their own.
///
/// ## Timeouts
/// `timeout: nil` waits as long as it takes. With a timeout the wait is done with `poll()`; when it expires the
/// connection is closed, since a reply arriving later would be taken for the answer to the next call.
public final class VarlinkConnection: Sendable {
    /// The socket path, when the connection was opened by path.
    public let path: String?
    /// The longest reply accepted, in bytes without the NUL terminator.
    public let maximumMessageSize: Int

    private let fd: Int32
    private let state: Mutex<State>
    // Guards the descriptor's life apart from `state`, so that `close()` can shut the socket down (waking a blocked
    // call) while that call holds `state`, and so that no shutdown can ever hit a number already closed and reused.
    private let descriptor = Mutex(DescriptorState())
    // Mirrors of `state.closedReason != nil` and of the open stream's token (0: none), readable without waiting for
    // a call in progress: `isClosed` and `VarlinkReplyStream.cancel()` must not block behind a blocked read.
    private let closedFlag = Atomic<Bool>(false)
    private let openStreamToken = Atomic<UInt64>(0)

    private struct State: Sendable {
        var framing: VarlinkFraming
        var writeBuffer: [UInt8] = []
        /// The open `more` stream, if any: its token and method.
        var stream: (token: UInt64, method: String)?
        var nextStreamToken: UInt64 = 1
        /// Why the connection can no longer be used, once it cannot.
        var closedReason: String?
    }

    private struct DescriptorState: Sendable {
        var shutDown = false
        var closed = false
    }

    /// Connects to the Varlink service listening on the Unix socket at `path`.
    ///
    /// - Parameter maximumMessageSize: The longest reply accepted, NUL excluded.
    /// - Throws: `VarlinkConnectionError.connectFailed`, whose description names the path and says how to start the
    ///   daemon or point at the right socket.
    public init(path: String, maximumMessageSize: Int = VarlinkFraming.defaultMaximumMessageSize) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < capacity else {
            throw VarlinkConnectionError.socketPathTooLong(path: path, limit: capacity - 1)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { target in
            target.copyBytes(from: pathBytes)
            target[pathBytes.count] = 0
        }
        let socketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(AF_UNIX, socketType, 0)
        guard fd >= 0 else { throw VarlinkConnectionError.systemCallFailed(call: "socket", errno: errno) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + 1)
        var result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        if result != 0 && errno == EINTR {
            // An interrupted connect goes on in the background; its outcome is reported through SO_ERROR.
            result = Self.finishInterruptedConnect(fd)
        }
        if result != 0 {
            let code = errno
            Glibc.close(fd)
            throw VarlinkConnectionError.connectFailed(path: path, errno: code)
        }
        self.path = path
        self.fd = fd
        self.maximumMessageSize = maximumMessageSize
        self.state = Mutex(State(framing: VarlinkFraming(maximumMessageSize: maximumMessageSize)))
    }

    /// Wraps `fd`, a connected stream socket (one end of a `socketpair`, or a socket passed by a parent process).
    /// The connection owns it from now on and closes it.
    public init(fd: Int32, maximumMessageSize: Int = VarlinkFraming.defaultMaximumMessageSize) {
        self.path = nil
        self.fd = fd
        self.maximumMessageSize = maximumMessageSize
        self.state = Mutex(State(framing: VarlinkFraming(maximumMessageSize: maximumMessageSize)))
    }

    deinit {
        descriptor.withLock { descriptor in
            if !descriptor.closed {
                descriptor.closed = true
                Glibc.close(fd)
            }
        }
    }

    /// Closes the connection. A call blocked on it in another thread wakes and throws; later calls throw
    /// `VarlinkConnectionError.closed`. Closing twice does nothing.
    public func close() {
        shutDown()
        state.withLock { state in
            markClosed(&state, reason: "closed by the client")
            descriptor.withLock { descriptor in
                if !descriptor.closed {
                    descriptor.closed = true
                    Glibc.close(fd)
                }
            }
        }
    }

    /// The socket, for a caller that waits for it to be readable with `poll()` or `epoll` before calling
    /// ``VarlinkReplyStream/nextIfReady()``. Read it only through the connection, and never close it.
    public var fileDescriptor: Int32 { fd }

    /// Whether the connection can no longer be used: closed, timed out, or closed by the service.
    public var isClosed: Bool {
        closedFlag.load(ordering: .acquiring)
    }

    // MARK: Calls

    /// Calls `method` with `parameters` and returns its reply decoded as an `R`.
    ///
    /// - Parameters:
    ///   - method: The fully qualified method, e.g. `io.offstage.App.Ping`.
    ///   - timeout: How long to wait for the reply; `nil` waits indefinitely.
    /// - Returns: The reply, freshly decoded and sharing nothing with the arguments (`sending`), so that it can be
    ///   returned out of a `Mutex.withLock` closure that makes the call.
    /// - Throws: `VarlinkError` when the service replies an error; `VarlinkConnectionError` when the call cannot be
    ///   made or its reply cannot be read.
    public func call<P: Encodable, R: Decodable>(
        _ method: String,
        _ parameters: P,
        as type: R.Type = R.self,
        timeout: Duration? = nil
    ) throws -> sending R {
        let deadline = Deadline(timeout)
        return try state.withLock { state throws -> R in
            try checkUsable(&state, method: method)
            try encode(method, parameters, more: false, oneway: false, into: &state.writeBuffer)
            try send(state: &state, method: method, deadline: deadline)
            let reply: VarlinkReplyMessage<R> = try receive(state: &state, method: method, deadline: deadline)
            switch reply {
            case .reply(let result, continues: false):
                return result
            case .reply(_, continues: true):
                // Replies to this call would keep coming and be taken for the answers to later calls.
                fail(&state, reason: "the service streamed replies to \(method), which was not called with more")
                throw VarlinkConnectionError.invalidReply(
                    method: method, reason: "\"continues\" on a call without more")
            case .error(let error):
                throw error
            }
        }
    }

    /// Calls `method` without parameters (`{}`) and returns its reply decoded as an `R`.
    public func call<R: Decodable>(
        _ method: String,
        as type: R.Type = R.self,
        timeout: Duration? = nil
    ) throws -> sending R {
        try call(method, VarlinkEmpty(), as: R.self, timeout: timeout)
    }

    /// Calls `method` with `"more": true` and returns the stream of its replies, read one at a time with
    /// `VarlinkReplyStream.next()`. The call is sent before this returns.
    ///
    /// Until the stream has ended (or is cancelled) the connection serves nothing else. Releasing an unfinished
    /// stream closes the connection, since the replies still to come cannot be told from those of a later call.
    public func callMore<P: Encodable, R: Decodable>(
        _ method: String,
        _ parameters: P,
        as type: R.Type = R.self,
        timeout: Duration? = nil
    ) throws -> VarlinkReplyStream<R> {
        let deadline = Deadline(timeout)
        let token = try state.withLock { state throws -> UInt64 in
            try checkUsable(&state, method: method)
            try encode(method, parameters, more: true, oneway: false, into: &state.writeBuffer)
            try send(state: &state, method: method, deadline: deadline)
            let token = state.nextStreamToken
            state.nextStreamToken += 1
            setStream(&state, (token, method))
            return token
        }
        return VarlinkReplyStream(connection: self, token: token, method: method)
    }

    /// Calls `method` with `"oneway": true`: the service replies nothing, not even an error. Returns once the call is
    /// written to the socket.
    public func oneway<P: Encodable>(_ method: String, _ parameters: P, timeout: Duration? = nil) throws {
        let deadline = Deadline(timeout)
        try state.withLock { state in
            try checkUsable(&state, method: method)
            try encode(method, parameters, more: false, oneway: true, into: &state.writeBuffer)
            try send(state: &state, method: method, deadline: deadline)
        }
    }

    /// `org.varlink.service.GetInfo`: who the service is and which interfaces it implements.
    public func serviceInfo(timeout: Duration? = nil) throws -> VarlinkServiceInfo {
        try call("org.varlink.service.GetInfo", as: VarlinkServiceInfo.self, timeout: timeout)
    }

    /// `org.varlink.service.GetInterfaceDescription`: the IDL text of `interface`.
    public func interfaceDescription(_ interface: String, timeout: Duration? = nil) throws -> String {
        try call(
            "org.varlink.service.GetInterfaceDescription",
            VarlinkInterfaceDescriptionRequest(interface: interface),
            as: VarlinkInterfaceDescriptionReply.self,
            timeout: timeout
        ).description
    }

    // MARK: Streams

    /// The next reply of the stream `token`, or `nil` once it has ended.
    fileprivate func nextReply<R: Decodable>(
        token: UInt64,
        method: String,
        timeout: Duration?
    ) throws -> sending R? {
        switch try nextReply(token: token, method: method, deadline: Deadline(timeout), onlyIfReady: false) as VarlinkStreamRead<R> {
        case .reply(let reply): reply
        case .ended, .notYet: nil
        }
    }

    /// The next reply of the stream `token`; with `onlyIfReady`, `.notYet` instead of waiting for one.
    fileprivate func nextReply<R: Decodable>(
        token: UInt64,
        method: String,
        deadline: Deadline?,
        onlyIfReady: Bool
    ) throws -> sending VarlinkStreamRead<R> {
        try state.withLock { state throws -> VarlinkStreamRead<R> in
            guard let stream = state.stream, stream.token == token else { return .ended }
            if let reason = state.closedReason { throw VarlinkConnectionError.closed(reason: reason) }
            let reply: VarlinkReplyMessage<R>
            do {
                guard let received: VarlinkReplyMessage<R> = try receive(
                    state: &state, method: method, deadline: deadline, onlyIfReady: onlyIfReady)
                else { return .notYet }
                reply = received
            } catch {
                setStream(&state, nil)
                throw error
            }
            switch reply {
            case .reply(let result, let continues):
                if !continues { setStream(&state, nil) }
                return .reply(result)
            case .error(let error):
                setStream(&state, nil)
                throw error
            }
        }
    }

    /// Ends the stream `token` early: the connection is closed. Shutting the socket down first wakes a `next()`
    /// blocked on it in another thread, which holds the lock until then.
    fileprivate func cancelStream(token: UInt64, method: String) {
        guard openStreamToken.load(ordering: .acquiring) == token else { return }
        shutDown()
        state.withLock { state in
            if state.stream?.token == token {
                markClosed(&state, reason: "the stream of \(method) was cancelled before its last reply")
            }
        }
    }

    // MARK: Internals

    /// Writes the call and its NUL into `buffer`, which is reused from call to call.
    private func encode<P: Encodable>(
        _ method: String,
        _ parameters: P,
        more: Bool,
        oneway: Bool,
        into buffer: inout [UInt8]
    ) throws {
        buffer.removeAll(keepingCapacity: true)
        do {
            try VarlinkCodec.appendCall(method, parameters, more: more, oneway: oneway, to: &buffer)
        } catch {
            throw VarlinkConnectionError.encodingFailed(method: method, reason: "\(error)")
        }
        buffer.append(0)
    }

    private func checkUsable(_ state: inout State, method: String) throws {
        if let reason = state.closedReason { throw VarlinkConnectionError.closed(reason: reason) }
        if let stream = state.stream { throw VarlinkConnectionError.busy(method: method, streaming: stream.method) }
    }

    /// Marks the connection unusable and shuts the socket down; the descriptor itself is closed by `close()`/deinit.
    private func fail(_ state: inout State, reason: String) {
        markClosed(&state, reason: reason)
        shutDown()
    }

    private func markClosed(_ state: inout State, reason: String) {
        if state.closedReason == nil { state.closedReason = reason }
        closedFlag.store(true, ordering: .releasing)
        setStream(&state, nil)
    }

    private func setStream(_ state: inout State, _ stream: (token: UInt64, method: String)?) {
        state.stream = stream
        openStreamToken.store(stream?.token ?? 0, ordering: .releasing)
    }

    private func shutDown() {
        descriptor.withLock { descriptor in
            if !descriptor.shutDown && !descriptor.closed {
                descriptor.shutDown = true
                _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
            }
        }
    }

    /// Sends `state.writeBuffer`, the encoded call.
    private func send(state: inout State, method: String, deadline: Deadline?) throws {
        // The buffer is moved out of `state` (no copy) so that failure handling below may change `state`.
        var buffer: [UInt8] = []
        swap(&buffer, &state.writeBuffer)
        defer { swap(&buffer, &state.writeBuffer) }
        let flags = Int32(MSG_NOSIGNAL) | (deadline == nil ? 0 : Int32(MSG_DONTWAIT))
        try buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, flags)
                if written >= 0 {
                    offset += written
                    continue
                }
                switch errno {
                case EINTR:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    if let deadline { try wait(for: Int16(POLLOUT), until: deadline, state: &state, method: method) }
                case EPIPE, ECONNRESET:
                    fail(&state, reason: "the service closed the connection")
                    throw VarlinkConnectionError.disconnected(method: method)
                case let code:
                    fail(&state, reason: "send failed: \(varlinkErrnoText(code))")
                    throw VarlinkConnectionError.systemCallFailed(call: "send", errno: code)
                }
            }
        }
    }

    private func receive<R: Decodable>(
        state: inout State,
        method: String,
        deadline: Deadline?
    ) throws -> VarlinkReplyMessage<R> {
        // Without `onlyIfReady`, receiving waits until a whole reply is there.
        try receive(state: &state, method: method, deadline: deadline, onlyIfReady: false)!
    }

    /// The next reply; with `onlyIfReady`, nil instead of waiting when no whole reply has arrived yet.
    private func receive<R: Decodable>(
        state: inout State,
        method: String,
        deadline: Deadline?,
        onlyIfReady: Bool
    ) throws -> VarlinkReplyMessage<R>? {
        while true {
            let decoded: Result<VarlinkReplyMessage<R>, any Error>?
            do {
                decoded = try state.framing.withNextMessage { bytes in
                    Result { try Self.decodeReply(bytes, as: R.self) }
                }
            } catch {
                fail(&state, reason: "a reply was longer than \(maximumMessageSize) bytes")
                throw VarlinkConnectionError.replyTooLarge(method: method, limit: maximumMessageSize)
            }
            if let decoded {
                do {
                    return try decoded.get()
                } catch let error as DecodingError {
                    throw VarlinkConnectionError.invalidReply(method: method, reason: Self.describe(error))
                }
            }
            if let deadline { try wait(for: Int16(POLLIN), until: deadline, state: &state, method: method) }
            var result = 0
            var code: Int32 = 0
            let flags = deadline == nil && !onlyIfReady ? Int32(0) : Int32(MSG_DONTWAIT)
            _ = state.framing.readIntoFreeSpace(minimumFreeSpace: 4096) { buffer in
                result = recv(fd, buffer.baseAddress, buffer.count, flags)
                if result < 0 { code = errno }
                return max(result, 0)
            }
            if result > 0 { continue }
            if result == 0 {
                fail(&state, reason: "the service closed the connection")
                throw VarlinkConnectionError.disconnected(method: method)
            }
            if onlyIfReady && (code == EAGAIN || code == EWOULDBLOCK) { return nil }
            switch code {
            case EINTR, EAGAIN, EWOULDBLOCK:
                continue
            case ECONNRESET:
                fail(&state, reason: "the service closed the connection")
                throw VarlinkConnectionError.disconnected(method: method)
            case let code:
                fail(&state, reason: "recv failed: \(varlinkErrnoText(code))")
                throw VarlinkConnectionError.systemCallFailed(call: "recv", errno: code)
            }
        }
    }

    private static func decodeReply<R: Decodable>(
        _ bytes: UnsafeRawBufferPointer,
        as type: R.Type
    ) throws -> VarlinkReplyMessage<R> {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            return try VarlinkCodec.decodeReply(Data(), as: R.self)
        }
        // The decoder is done with the bytes before this returns, so it can read them in place.
        let data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none)
        return try VarlinkCodec.decodeReply(data, as: R.self)
    }

    private static func describe(_ error: DecodingError) -> String {
        // Only the parameters go through the decoder, so a path is one inside them.
        let (path, text) = VarlinkCodec.describe(error)
        return path.isEmpty ? text : "parameters.\(path.joined(separator: ".")): \(text)"
    }

    /// Waits with `poll()` until the socket is ready for `events` or `deadline` passes (then the connection is
    /// closed and the call throws `timedOut`).
    private func wait(for events: Int16, until deadline: Deadline, state: inout State, method: String) throws {
        while true {
            let remaining = deadline.remainingMilliseconds()
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&descriptor, 1, remaining)
            if ready > 0 { return }
            if ready == 0 && remaining == 0 {
                fail(&state, reason: "\(method) timed out")
                throw VarlinkConnectionError.timedOut(method: method, timeout: deadline.timeout)
            }
            if ready < 0 && errno != EINTR {
                let code = errno
                fail(&state, reason: "poll failed: \(varlinkErrnoText(code))")
                throw VarlinkConnectionError.systemCallFailed(call: "poll", errno: code)
            }
        }
    }

    /// Waits for an interrupted `connect` to finish; returns 0 when it succeeded, or -1 with `errno` set.
    private static func finishInterruptedConnect(_ fd: Int32) -> Int32 {
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        while poll(&descriptor, 1, -1) < 0 && errno == EINTR {}
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return -1 }
        if error == 0 { return 0 }
        errno = error
        return -1
    }
}

/// The replies of a call made with `more`, read one at a time on the caller's thread.
///
/// ```swift
/// let events = try connection.callMore("io.offstage.App.Events", VarlinkEmpty(), as: AppEvent.self)
/// while let event = try events.next() { handle(event) }
/// ```
public final class VarlinkReplyStream<R: Decodable>: Sendable {
    private let connection: VarlinkConnection
    private let token: UInt64
    /// The method whose replies these are.
    public let method: String

    fileprivate init(connection: VarlinkConnection, token: UInt64, method: String) {
        self.connection = connection
        self.token = token
        self.method = method
    }

    deinit {
        connection.cancelStream(token: token, method: method)
    }

    /// The next reply, or `nil` after the last one (the one without `"continues": true`).
    ///
    /// - Parameter timeout: How long to wait for this reply; `nil` waits indefinitely. On timeout the connection is
    ///   closed.
    /// - Throws: `VarlinkError` when the service ends the stream with an error; `VarlinkConnectionError` when the
    ///   connection fails.
    public func next(timeout: Duration? = nil) throws -> sending R? {
        try connection.nextReply(token: token, method: method, timeout: timeout)
    }

    /// The next reply if a whole one has arrived, without waiting: for a caller that waits for the socket itself
    /// (with `poll()` on ``VarlinkConnection/fileDescriptor``) on a thread that must not block, such as an app's main
    /// thread. Call it until it returns `.notYet`: several replies may arrive in one read.
    ///
    /// - Throws: as ``next(timeout:)``; the connection is closed when the service closes its end.
    public func nextIfReady() throws -> sending VarlinkStreamRead<R> {
        try connection.nextReply(token: token, method: method, deadline: nil, onlyIfReady: true)
    }

    /// Stops reading: the connection is closed, since the service may still send replies to this call.
    public func cancel() {
        connection.cancelStream(token: token, method: method)
    }
}

/// What ``VarlinkReplyStream/nextIfReady()`` found.
public enum VarlinkStreamRead<R> {
    /// A reply of the stream.
    case reply(R)
    /// No whole reply has arrived yet: wait for the socket to be readable, then ask again.
    case notYet
    /// The stream has ended (its last reply was read before).
    case ended
}

/// A point in monotonic time by which a call must complete.
private struct Deadline {
    let timeout: Duration
    let end: UInt64  // CLOCK_MONOTONIC nanoseconds

    init?(_ timeout: Duration?) {
        guard let timeout else { return nil }
        self.timeout = timeout
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        end = Deadline.now() &+ UInt64(nanoseconds)
    }

    /// Milliseconds left, rounded up so that a wait never ends early; 0 once passed.
    func remainingMilliseconds() -> Int32 {
        let now = Deadline.now()
        guard now < end else { return 0 }
        return Int32(clamping: (end - now + 999_999) / 1_000_000)
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
