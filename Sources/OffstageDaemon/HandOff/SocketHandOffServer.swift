import COffstageSystem
import Foundation
import Glibc
import OffstageProtocol
import Synchronization

/// The daemon's side of the socket hand-off (SPEC MODE-2): a small Unix socket, beside the main Varlink socket, on
/// which an app sends one Varlink call with one descriptor attached (`SCM_RIGHTS`). SwiftNIO cannot receive
/// descriptors, so this server is one plain thread with `poll` and `accept`, serving one connection at a time.
///
/// For each connection: the call is read (at most `maximumMessageSize` bytes, within `readTimeout`), the caller's
/// credentials are taken from the kernel (`SO_PEERCRED`), the handler decides, the reply is written and the connection
/// closed. Malformed, oversized or late calls are answered with a Varlink error and the server goes on serving.
///
/// ## The received descriptor
/// It is passed to the handler, which owns it when it answers success (it hands it to a ``SocketWatcher``, say); when
/// the handler refuses, the server closes it. A call that came without one reaches the handler with `nil`, so that it
/// can say so. The descriptor shares its open file description with the app's: never change its flags (`O_NONBLOCK`
/// would change for the app too) and never read from it.
public final class SocketHandOffServer: Sendable {
    /// Decides about one hand-off: `receivedFD` is the descriptor that came with the call (`nil` when none did),
    /// `parameters` the call's parameters (`{}` when it had none). A `.success` is sent as the reply's parameters
    /// (a JSON object) and leaves the descriptor with the handler; a `.failure` is sent as the error (put the reason
    /// in its `description` parameter) and the server closes the descriptor.
    ///
    /// It runs on the server's thread and may block (to wait for the daemon's event loop, say); other hand-offs wait
    /// in the socket's backlog meanwhile.
    public typealias Handler = @Sendable (
        _ peer: PeerCredentials, _ receivedFD: Int32?, _ method: String, _ parameters: JSONValue
    ) -> Result<JSONValue, VarlinkError>

    /// The socket path.
    public let socketPath: String
    /// Sizes, timeouts and names.
    public let settings: SocketHandOffSettings

    /// Everything that changes, behind one lock.
    private struct State {
        /// Where the server is in its life.
        var phase = Phase.idle
        /// The serving thread's kernel id while it runs.
        var threadID: Int32?
    }

    /// Where the server is in its life: it starts once and stops once.
    private enum Phase {
        /// Made, not started.
        case idle
        /// Serving; the thread owns (and at its end closes) the listener and the eventfd.
        case running(listener: Int32, wake: Int32, thread: WatcherThread?, file: VarlinkSocketFileIdentity?)
        /// `stop()` was called; `closed` once the thread has closed the listener and the eventfd.
        case stopping(closed: Bool)
    }

    /// Decides each hand-off.
    private let handler: Handler
    /// The phase and thread id.
    private let state = Mutex(State())

    /// A server for `socketPath`, not yet listening.
    public init(socketPath: String, settings: SocketHandOffSettings = .default, handler: @escaping Handler) {
        self.socketPath = socketPath
        self.settings = settings
        self.handler = handler
    }

    /// Makes the socket and starts serving on a thread of its own.
    ///
    /// Missing parent directories are created (0700), a stale socket file (one nothing listens on) is replaced, and
    /// the socket gets `settings.socketMode`.
    ///
    /// - Throws: ``SocketHandOffServerError``: another process listens on the path, the path is some other file, a
    ///   system call failed, or the server was started before.
    public func start() throws(SocketHandOffServerError) {
        try state.withLock { state throws(SocketHandOffServerError) in
            guard case .idle = state.phase else { throw .alreadyStarted }
            let path = socketPath
            let listener: Int32
            do {
                try VarlinkSocketFile.prepare(path)
                listener = try VarlinkSocketFile.makeListeningSocket(path, backlog: settings.listenBacklog)
            } catch let error as VarlinkServerError {
                throw SocketHandOffServerError(error, path: path)
            } catch {
                throw .socketSetupFailed(path: path, operation: "prepare", errno: 0)
            }
            let wake = offstage_eventfd()
            // Non-blocking, so that a client gone between poll and accept cannot block the thread in accept.
            let flags = fcntl(listener, F_GETFL)
            guard wake >= 0, chmod(path, mode_t(settings.socketMode)) == 0, flags >= 0,
                fcntl(listener, F_SETFL, flags | O_NONBLOCK) == 0
            else {
                let code = errno
                if wake >= 0 { close(wake) }
                close(listener)
                unlink(path)
                throw .socketSetupFailed(path: path, operation: "setup", errno: code)
            }
            let file = VarlinkSocketFileIdentity(path: path)
            state.phase = .running(listener: listener, wake: wake, thread: nil, file: file)
            do {
                let thread = try WatcherThread(name: settings.serverThreadName) { [self] in
                    run(listener: listener, wake: wake)
                }
                state.phase = .running(listener: listener, wake: wake, thread: thread, file: file)
            } catch {
                state.phase = .idle
                close(wake)
                close(listener)
                unlink(path)
                let code = (error as? ProcessControlError)?.errno ?? 0
                throw .socketSetupFailed(path: path, operation: "pthread_create", errno: code)
            }
        }
    }

    /// Stops serving: wakes the thread, waits for it to end (unless called from the handler), and removes the socket
    /// file (unless another server has replaced it since). A hand-off in progress is finished first. Stopping a
    /// server that is not running does nothing.
    public func stop() {
        let running: (thread: WatcherThread?, file: VarlinkSocketFileIdentity?)? = state.withLock { state in
            guard case .running(_, let wake, let thread, let file) = state.phase else { return nil }
            state.phase = .stopping(closed: false)
            var one: UInt64 = 1
            _ = Glibc.write(wake, &one, MemoryLayout<UInt64>.size)
            return (thread, file)
        }
        guard let running else { return }
        if let thread = running.thread, !thread.isCurrent { thread.join() }
        if let file = running.file, VarlinkSocketFileIdentity(path: socketPath) == file { unlink(socketPath) }
    }

    /// The kernel id of the server's thread while it runs (a name in `/proc/self/task`), for tests.
    var threadID: Int32? { state.withLock { $0.threadID } }

    // MARK: - Serving

    /// The thread: waits for a connection or the stop eventfd, and serves connections one at a time.
    private func run(listener: Int32, wake: Int32) {
        state.withLock { $0.threadID = offstage_gettid() }
        // One buffer for every connection, one byte more than the limit so that a message too long is seen as one.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: settings.maximumMessageSize + 1, alignment: 1)
        defer {
            buffer.deallocate()
            state.withLock { state in
                state.threadID = nil
                state.phase = .stopping(closed: true)
                close(listener)
                close(wake)
            }
        }
        var entries = [
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0), pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            entries[0].revents = 0
            entries[1].revents = 0
            let ready = poll(&entries, 2, -1)
            if ready < 0 && errno != EINTR { return }
            if entries[0].revents != 0 { return }
            guard entries[1].revents != 0 else { continue }
            let connection = offstage_accept_cloexec(listener)
            guard connection >= 0 else { continue }
            serve(connection, wake: wake, buffer: buffer)
            close(connection)
        }
    }

    /// Reads the call, asks the handler, replies. The received descriptor is closed here unless the handler took it,
    /// and before the reply goes out, so that a client that has its answer knows the daemon holds no copy.
    private func serve(_ connection: Int32, wake: Int32, buffer: UnsafeMutableRawBufferPointer) {
        let exchange = SocketHandOffExchange(connection: connection, wake: wake, settings: settings)
        let read = exchange.readCall(into: buffer)
        var received = read.fd
        func answer(_ reply: Data) {
            if let fd = received { close(fd) }
            received = nil
            exchange.reply(reply)
        }
        let call: VarlinkReceivedCall
        let parameters: JSONValue
        do throws(VarlinkError) {
            switch read.outcome {
            case .gone:
                return answer(Data())  // nothing is sent: an empty reply is dropped below
            case .failed(let error):
                throw error
            case .message(let message):
                call = try VarlinkCodec.decodeCall(message)
                parameters = try call.decodeParameters(as: JSONValue.self)
            }
        } catch {
            return answer(VarlinkCodec.encodeError(error))
        }
        guard let peer = exchange.peerCredentials() else {
            return answer(VarlinkCodec.encodeError(.internalError(reason: "SO_PEERCRED failed: errno \(errno)")))
        }
        switch handler(peer, received, call.header.method, parameters) {
        case .success(let result):
            received = nil  // the handler owns it now
            let reply = (try? VarlinkCodec.encodeReply(result))
                ?? VarlinkCodec.encodeError(.internalError(reason: "the hand-off reply could not be encoded as JSON"))
            answer(call.header.oneway ? Data() : reply)
        case .failure(let error):
            answer(call.header.oneway ? Data() : VarlinkCodec.encodeError(error))
        }
    }
}

/// Why a ``SocketHandOffServer`` could not start.
public enum SocketHandOffServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Another process accepts connections on `path`.
    case alreadyRunning(path: String)
    /// `path` exists and is not a socket.
    case pathNotASocket(path: String)
    /// `operation` on `path` failed with `errno`.
    case socketSetupFailed(path: String, operation: String, errno: Int32)
    /// `start()` was called twice.
    case alreadyStarted

    /// The same failure of preparing the socket file, as `VarlinkSocketFile` reports it.
    init(_ error: VarlinkServerError, path: String) {
        switch error {
        case .alreadyRunning: self = .alreadyRunning(path: path)
        case .pathNotASocket: self = .pathNotASocket(path: path)
        case .socketSetupFailed(_, let operation, let code):
            self = .socketSetupFailed(path: path, operation: operation, errno: code)
        case .alreadyStarted, .noPeerCredentials: self = .socketSetupFailed(path: path, operation: "prepare", errno: 0)
        }
    }

    /// What is wrong and how to fix it.
    public var description: String {
        switch self {
        case .alreadyRunning(let path):
            "Another process already listens on the hand-off socket \(path): another offstaged, most likely. Stop it "
                + "first, or give this daemon another runtime directory."
        case .pathNotASocket(let path):
            "\(path) exists and is not a socket, so the hand-off server will not replace it. Remove it, or give this "
                + "daemon another runtime directory."
        case .socketSetupFailed(let path, let operation, let code):
            "Cannot set up the hand-off socket \(path): \(operation) failed: \(String(cString: strerror(code))) "
                + "(errno \(code)). Check the permissions of its directory."
        case .alreadyStarted:
            "SocketHandOffServer.start() was called twice; a server starts once."
        }
    }
}
