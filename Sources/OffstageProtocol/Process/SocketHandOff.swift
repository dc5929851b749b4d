import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The app's side of handing one socket to the daemon (SPEC MODE-2): the daemon watches it while the app is
/// suspended and wakes the app when data arrives, without ever reading it.
///
/// The daemon's main Varlink socket is served by SwiftNIO, which cannot receive file descriptors, so the hand-off uses
/// a second, small Unix socket. Each hand-off is one fresh connection carrying one Varlink call with the descriptor
/// attached (`SCM_RIGHTS`), one reply, and a close:
///
/// ```swift
/// let reply = try SocketHandOff.send(fd: signalling, to: handOffPath, parameters: request, as: VarlinkEmpty.self)
/// ```
///
/// The app keeps its own descriptor: the daemon receives a duplicate of it, so both refer to the same socket.
public enum SocketHandOff {
    /// The method called unless another is given. The interface that declares it is defined elsewhere; this is only
    /// the default name.
    public static let defaultMethod = "io.offstage.App.HandOffSocket"

    /// How long a hand-off may take, connecting through reading the reply, unless another timeout is given.
    public static let defaultTimeout: Duration = .seconds(5)

    /// The longest reply accepted, NUL excluded, unless another limit is given: a hand-off reply is a few fields.
    public static let defaultMaximumReplySize = 64 * 1024

    /// Sends `fd` to the daemon's hand-off socket at `path` with one call of `method` and returns its reply.
    ///
    /// - Parameters:
    ///   - fd: The socket to hand off. It stays open in the caller, who still owns it.
    ///   - path: The hand-off socket's path.
    ///   - method: The fully qualified method called.
    ///   - parameters: The call's parameters.
    ///   - type: What the reply's parameters decode as.
    ///   - timeout: How long the whole hand-off may take.
    ///   - maximumReplySize: The longest reply accepted, NUL excluded.
    /// - Throws: ``SocketHandOffError``; `.refused` carries the daemon's own reason.
    public static func send<P: Encodable, R: Decodable>(
        fd: Int32,
        to path: String,
        method: String = defaultMethod,
        parameters: P,
        as type: R.Type = R.self,
        timeout: Duration = defaultTimeout,
        maximumReplySize: Int = defaultMaximumReplySize
    ) throws(SocketHandOffError) -> R {
        // Checked here so that the error names the caller's descriptor rather than a failed sendmsg.
        guard fd >= 0, fcntl(fd, F_GETFD) >= 0 else { throw .descriptorNotOpen(fd: fd) }
        var message: [UInt8] = []
        do {
            message = Array(try VarlinkCodec.encodeCall(method, parameters))
        } catch {
            throw .encodingFailed(reason: "\(error)")
        }
        message.append(0)
        let end = ContinuousClock.now.advanced(by: timeout)
        let connection = try connect(path, timeout: timeout)
        defer { close(connection) }
        try sendAll(message, fd: fd, on: connection, until: end, timeout: timeout)
        let reply = try receiveReply(on: connection, limit: maximumReplySize, until: end, timeout: timeout)
        let decoded: VarlinkReplyMessage<R>
        do {
            decoded = try VarlinkCodec.decodeReply(reply, as: R.self)
        } catch {
            throw .invalidReply(reason: "\(error)")
        }
        switch decoded {
        case .reply(let result, _): return result
        case .error(let error): throw .refused(error)
        }
    }

    // MARK: Internals

    /// A fresh connection to the hand-off socket at `path`, close-on-exec.
    private static func connect(_ path: String, timeout: Duration) throws(SocketHandOffError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < capacity else { throw .socketPathTooLong(path: path, limit: capacity - 1) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes + [0]) }
        let connection = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard connection >= 0 else { throw .systemCallFailed(call: "socket", errno: errno) }
        // A Unix connect blocks only while the daemon's backlog is full; SO_SNDTIMEO bounds that wait.
        let (seconds, attoseconds) = timeout.components
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        _ = setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + 1)
        var result: Int32
        repeat {
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(connection, $0, length) }
            }
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            close(connection)
            switch code {
            case ENOENT, ECONNREFUSED: throw .daemonNotRunning(path: path, errno: code)
            case EAGAIN, EINPROGRESS: throw .timedOut(timeout: timeout)
            default: throw .cannotConnect(path: path, errno: code)
            }
        }
        return connection
    }

    /// Sends `message` with `fd` attached to its first bytes; the rest, if the socket took only part, goes without.
    private static func sendAll(
        _ message: [UInt8], fd: Int32, on connection: Int32, until end: ContinuousClock.Instant, timeout: Duration
    ) throws(SocketHandOffError) {
        var offset = 0
        var attached = false
        while offset < message.count {
            let sent = message.withUnsafeBytes { bytes in
                attached ? Glibc.send(connection, bytes.baseAddress! + offset, bytes.count - offset, flags)
                    : sendWithDescriptor(connection, UnsafeRawBufferPointer(rebasing: bytes[offset...]), fd: fd)
            }
            if sent >= 0 {
                offset += sent
                attached = true
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try wait(connection, for: Int16(POLLOUT), until: end, timeout: timeout)
            // The daemon stopped reading, most likely to refuse the call: its reply, if any, says why.
            case EPIPE, ECONNRESET: return
            case EBADF where !attached: throw .descriptorNotOpen(fd: fd)
            case let code: throw .systemCallFailed(call: "sendmsg", errno: code)
            }
        }
    }

    /// Every send and receive: no SIGPIPE, and no blocking (waits are `poll()` calls against the deadline).
    private static let flags = Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)

    /// `sendmsg` with one `SCM_RIGHTS` descriptor; the `CMSG_*` macros are not visible to Swift, so the control
    /// message is laid out here as glibc's macros would (header and data each aligned to `size_t`).
    private static func sendWithDescriptor(_ connection: Int32, _ bytes: UnsafeRawBufferPointer, fd: Int32) -> Int {
        let word = MemoryLayout<Int>.size
        func aligned(_ size: Int) -> Int { (size + word - 1) & ~(word - 1) }
        let headerSize = aligned(MemoryLayout<cmsghdr>.size)
        let space = headerSize + aligned(MemoryLayout<Int32>.size)
        let control = UnsafeMutableRawBufferPointer.allocate(
            byteCount: space, alignment: MemoryLayout<cmsghdr>.alignment)
        defer { control.deallocate() }
        control.initializeMemory(as: UInt8.self, repeating: 0)
        var header = cmsghdr()
        header.cmsg_len = headerSize + MemoryLayout<Int32>.size
        header.cmsg_level = SOL_SOCKET
        header.cmsg_type = Int32(SCM_RIGHTS)
        control.storeBytes(of: header, as: cmsghdr.self)
        control.storeBytes(of: fd, toByteOffset: headerSize, as: Int32.self)
        var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
            var message = msghdr()
            message.msg_iov = vectorPointer
            message.msg_iovlen = 1
            message.msg_control = control.baseAddress
            message.msg_controllen = space
            return sendmsg(connection, &message, flags)
        }
    }

    /// Reads the one NUL-terminated reply.
    private static func receiveReply(
        on connection: Int32, limit: Int, until end: ContinuousClock.Instant, timeout: Duration
    ) throws(SocketHandOffError) -> Data {
        var framing = VarlinkFraming(maximumMessageSize: limit, initialCapacity: 4096)
        while true {
            do {
                if let message = try framing.nextMessage() { return message }
            } catch {
                throw .replyTooLarge(limit: limit)
            }
            var code: Int32 = 0
            let count = framing.readIntoFreeSpace { buffer in
                let received = recv(connection, buffer.baseAddress, buffer.count, flags)
                if received < 0 { code = errno }
                return max(received, 0)
            }
            if count > 0 { continue }
            switch code {
            case 0, ECONNRESET: throw .disconnected
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try wait(connection, for: Int16(POLLIN), until: end, timeout: timeout)
            default: throw .systemCallFailed(call: "recv", errno: code)
            }
        }
    }

    /// Waits with `poll()` until `connection` is ready for `events`, or throws `timedOut` once `end` has passed.
    private static func wait(
        _ connection: Int32, for events: Int16, until end: ContinuousClock.Instant, timeout: Duration
    ) throws(SocketHandOffError) {
        while true {
            let left = ContinuousClock.now.duration(to: end)
            guard left > .zero else { throw .timedOut(timeout: timeout) }
            // Rounded up, so that the wait never ends just before the deadline and spins.
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var entry = pollfd(fd: connection, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .systemCallFailed(call: "poll", errno: errno) }
        }
    }
}

/// Why a ``SocketHandOff`` failed. ``code`` is stable, for programs; the description says what was wrong and how to
/// fix it, for people.
public enum SocketHandOffError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens at `path` (no socket file, or one left by a daemon that has exited).
    case daemonNotRunning(path: String, errno: Int32)
    /// Connecting to `path` failed for another reason (permissions, say).
    case cannotConnect(path: String, errno: Int32)
    /// `path` does not fit in a Unix socket address (`limit` bytes).
    case socketPathTooLong(path: String, limit: Int)
    /// `fd` is not an open descriptor of this process.
    case descriptorNotOpen(fd: Int32)
    /// The daemon refused the socket; the error's `description` parameter says why.
    case refused(VarlinkError)
    /// The hand-off did not complete within `timeout`.
    case timedOut(timeout: Duration)
    /// The daemon closed the connection before replying.
    case disconnected
    /// The reply was longer than `limit` bytes.
    case replyTooLarge(limit: Int)
    /// The reply was not a Varlink reply of the expected shape.
    case invalidReply(reason: String)
    /// The parameters could not be encoded as JSON.
    case encodingFailed(reason: String)
    /// The system call `call` failed with `errno`.
    case systemCallFailed(call: String, errno: Int32)

    /// A stable name for the kind of failure, e.g. `daemon-not-running`.
    public var code: String {
        switch self {
        case .daemonNotRunning: "daemon-not-running"
        case .cannotConnect: "cannot-connect"
        case .socketPathTooLong: "socket-path-too-long"
        case .descriptorNotOpen: "descriptor-not-open"
        case .refused: "refused"
        case .timedOut: "timed-out"
        case .disconnected: "disconnected"
        case .replyTooLarge: "reply-too-large"
        case .invalidReply: "invalid-reply"
        case .encodingFailed: "encoding-failed"
        case .systemCallFailed: "system-call-failed"
        }
    }

    /// What went wrong and what to do about it.
    /// The daemon's reason: its `message` and `fix` (as every Offstage interface error has), else its `description`.
    static func reason(_ error: VarlinkError) -> String {
        if let message = error.stringParameter("message") {
            return error.stringParameter("fix").map { "\(message); \($0)" } ?? message
        }
        return error.stringParameter("description") ?? error.name
    }

    public var description: String {
        switch self {
        case .daemonNotRunning(let path, let code):
            "Cannot hand the socket to the Offstage daemon: nothing listens on \(path) (\(varlinkErrnoText(code))). "
                + "Is offstaged running? Start it, or check the hand-off socket path it announced."
        case .cannotConnect(let path, let code):
            "Cannot hand the socket to the Offstage daemon: connecting to \(path) failed: \(varlinkErrnoText(code)). "
                + "Check that this app runs as the daemon's user and that the path is the daemon's hand-off socket."
        case .socketPathTooLong(let path, let limit):
            "The hand-off socket path \(path) is \(path.utf8.count) bytes long; Unix sockets allow at most \(limit). "
                + "Give the daemon a shorter runtime directory."
        case .descriptorNotOpen(let fd):
            "fd \(fd) is not an open descriptor in this process, so there is nothing to hand off: pass the connected "
                + "socket to your signalling server, and keep it open until the call returns."
        case .refused(let error):
            "The Offstage daemon refused the socket: \(Self.reason(error)) (\(error.name))."
        case .timedOut(let timeout):
            "The Offstage daemon did not answer the socket hand-off within \(timeout). It may be stuck or "
                + "overloaded; retry later or raise the timeout."
        case .disconnected:
            "The Offstage daemon closed the hand-off connection before replying. It may have exited or rejected the "
                + "message; its log says which."
        case .replyTooLarge(let limit):
            "The daemon's reply to the socket hand-off was longer than \(limit) bytes. Raise maximumReplySize if the "
                + "daemon is newer than this app and sends more."
        case .invalidReply(let reason):
            "The daemon's reply to the socket hand-off could not be understood: \(reason). The daemon and this app "
                + "may be different versions."
        case .encodingFailed(let reason):
            "The parameters of the socket hand-off could not be encoded as JSON: \(reason)."
        case .systemCallFailed(let call, let code):
            "\(call) failed during the socket hand-off: \(varlinkErrnoText(code))."
        }
    }
}
