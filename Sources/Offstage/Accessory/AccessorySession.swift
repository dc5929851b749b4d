import Dispatch
import Glibc
import Synchronization

/// An open channel to an accessory, as `EASession` (SPEC MODE-4): the app opens the accessory's path itself, reads
/// what it sends and writes to it.
///
/// ```swift
/// let session = try AccessorySession(accessory: scanner)   // opens it and hands it to the system
/// session.readabilityHandler = { session in
///     let bytes = (try? session.read()) ?? []
/// }
/// ```
///
/// A serial port or other character device is opened without blocking and never as the app's controlling terminal;
/// a terminal is put in raw mode (bytes pass unchanged). A Unix socket is connected as a stream. ``read(upTo:)`` never
/// waits: it returns what is there, and nothing when nothing is. Reading, writing and closing are safe from any thread.
///
/// While the app runs it reads the session itself; once the session is handed off (``init(accessory:baudRate:)`` does,
/// or ``handOff(accessoryNamed:)``) the system watches a duplicate of it while the app is suspended, never reading
/// it: data wakes the app (``AccessoryManagerDelegate/accessoryManager(_:didReceiveDataFrom:)``), a hang-up is a
/// disconnection. If the daemon restarts, the SDK hands the session off again.
public final class AccessorySession: Sendable, CustomStringConvertible {
    /// What the channel is.
    public enum Kind: String, Hashable, Sendable {
        /// A character device: a serial port, a Bluetooth RFCOMM port, a pseudo-terminal.
        case characterDevice = "character-device"
        /// A named pipe.
        case fifo
        /// A connected Unix stream socket.
        case socket
    }

    /// The path the session opened.
    public let path: String
    /// What the channel is.
    public let kind: Kind
    /// Whether the channel is a terminal (a serial port), which the session put in raw mode.
    public let isTerminal: Bool

    private struct State {
        var fd: Int32
        var name: String?
        var watcher: ReadWatcher?
    }

    private let state: Mutex<State>
    /// The registry that re-hands the session off after a daemon restart; set by the hand-off.
    private let registry = Mutex<AccessoryRegistry?>(nil)

    /// Opens the channel at `path` without handing it to the system (it does not wake the app while suspended until
    /// ``handOff(accessoryNamed:)``).
    ///
    /// - Parameter baudRate: for a serial port, the line speed to set (9600, 115200, …); nil keeps the device's.
    /// - Throws: ``AccessoryError`` with code `notConnected` when nothing is at `path`, `accessDenied` when the app
    ///   may not open it, `invalidArgument` when it is not a character device, FIFO or socket.
    public init(path: String, baudRate: Int? = nil) throws(AccessoryError) {
        let opened = try AccessoryChannel.open(path, baudRate: baudRate)
        self.path = path
        self.kind = opened.kind
        self.isTerminal = opened.isTerminal
        self.state = Mutex(State(fd: opened.fd))
    }

    /// Opens the registered accessory's channel and hands it to the system, so that data from the accessory wakes
    /// the app while it is suspended. A new session of the same accessory replaces the previous one in the system.
    ///
    /// - Throws: ``AccessoryError``: as ``init(path:baudRate:)``, and when the system refuses the session (the
    ///   accessory is not registered) or cannot be reached; the channel is then closed.
    public convenience init(accessory: Accessory, baudRate: Int? = nil) throws(AccessoryError) {
        try self.init(path: accessory.path, baudRate: baudRate)
        do {
            try handOff(accessoryNamed: accessory.name)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// The channel's descriptor, for the app's own event loop; -1 once closed. It stays the session's: do not close it.
    public var fileDescriptor: Int32 { state.withLock { $0.fd } }

    /// Whether the session is open.
    public var isOpen: Bool { fileDescriptor >= 0 }

    /// The registered accessory the session was handed off as, if it was.
    public var accessoryName: String? { state.withLock { $0.name } }

    /// `scanner: /dev/ttyACM0 (character-device, terminal)`.
    public var description: String {
        let kindText = isTerminal ? "\(kind.rawValue), terminal" : kind.rawValue
        return "\(accessoryName.map { "\($0): " } ?? "")\(path) (\(kindText)\(isOpen ? "" : ", closed"))"
    }

    // MARK: Reading and writing

    /// Reads what the accessory has sent, up to `maximumLength` bytes, without waiting: empty when nothing is there.
    ///
    /// - Throws: ``AccessoryError`` with code `disconnected` once the accessory hung up (after everything it sent
    ///   before was read), `closed` after ``close()``.
    public func read(upTo maximumLength: Int = 4096) throws(AccessoryError) -> [UInt8] {
        try state.withLock { state throws(AccessoryError) -> [UInt8] in
            guard state.fd >= 0 else { throw closedError }
            var bytes = [UInt8](repeating: 0, count: max(maximumLength, 1))
            var count = 0
            while count < bytes.count {
                let result = bytes.withUnsafeMutableBytes {
                    Glibc.read(state.fd, $0.baseAddress! + count, $0.count - count)
                }
                if result > 0 {
                    count += result
                    continue
                }
                let code = errno
                if result < 0 && code == EINTR { continue }
                if result < 0 && (code == EAGAIN || code == EWOULDBLOCK) { break }
                // 0 (end of file) or EIO: the accessory hung up. What came before is returned first; the next read
                // reports the hang-up. The readability handler stops, or it would be called for the hang-up forever.
                if count > 0 { break }
                state.watcher?.cancel()
                state.watcher = nil
                if result == 0 || code == EIO || code == ECONNRESET { throw .disconnected(path) }
                throw .system("read", path: path, errno: code)
            }
            return Array(bytes[..<count])
        }
    }

    /// Writes every byte, waiting at most `timeout` for the accessory to take them.
    ///
    /// - Throws: ``AccessoryError`` with code `disconnected` when the accessory hung up, `ioFailed` when it did not
    ///   take the bytes in time (part of them may have been written), `closed` after ``close()``.
    public func write(_ bytes: [UInt8], timeout: Duration = .seconds(5)) throws(AccessoryError) {
        let end = ContinuousClock.now + timeout
        try state.withLock { state throws(AccessoryError) in
            guard state.fd >= 0 else { throw closedError }
            var written = 0
            while written < bytes.count {
                let result = bytes.withUnsafeBytes { buffer in
                    let start = buffer.baseAddress! + written
                    // MSG_NOSIGNAL: a peer that hung up must be an error here, not a SIGPIPE that ends the app.
                    return kind == .socket
                        ? send(state.fd, start, buffer.count - written, Int32(MSG_NOSIGNAL))
                        : Glibc.write(state.fd, start, buffer.count - written)
                }
                if result > 0 {
                    written += result
                    continue
                }
                let code = errno
                guard result < 0, code == EAGAIN || code == EWOULDBLOCK || code == EINTR else {
                    throw .system("write", path: path, errno: result == 0 ? EIO : code)
                }
                if code == EINTR { continue }
                try waitWritable(state.fd, until: end, wrote: written, of: bytes.count)
            }
        }
    }

    /// Writes `text` as UTF-8; see the byte-array `write`.
    public func write(_ text: String, timeout: Duration = .seconds(5)) throws(AccessoryError) {
        try write(Array(text.utf8), timeout: timeout)
    }

    /// Waits until the channel takes more bytes, or fails at `end` or on a hang-up.
    private func waitWritable(
        _ fd: Int32, until end: ContinuousClock.Instant, wrote: Int, of total: Int
    ) throws(AccessoryError) {
        let left = ContinuousClock.now.duration(to: end)
        guard left > .zero else {
            throw AccessoryError(
                .ioFailed, "the accessory at \(path) took \(wrote) of \(total) bytes and no more in time",
                fix: "check that the accessory reads what the app sends (flow control, baud rate), or wait longer")
        }
        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let milliseconds = Int32(min(left / .milliseconds(1), 60_000)) + 1
        _ = poll(&entry, 1, milliseconds)
        if entry.revents & Int16(POLLHUP | POLLERR) != 0 && entry.revents & Int16(POLLOUT) == 0 {
            throw .disconnected(path)
        }
    }

    // MARK: Watching while running

    /// Called on the main actor whenever the accessory has sent something to read (and once when it hangs up, where
    /// ``read(upTo:)`` throws `disconnected`), while the app runs; nil stops it. As `FileHandle.readabilityHandler`.
    public var readabilityHandler: (@MainActor @Sendable (AccessorySession) -> Void)? {
        get { state.withLock { $0.watcher?.handler } }
        set {
            state.withLock { state in
                state.watcher?.cancel()
                state.watcher = nil
                guard let newValue, state.fd >= 0 else { return }
                state.watcher = ReadWatcher(fd: state.fd, handler: newValue) { [weak self] in self }
            }
        }
    }

    // MARK: Hand-off and close

    /// Hands a duplicate of the session to the system as the channel of the registered accessory `name`: while the
    /// app is suspended the system watches it, never reading it; data wakes the app and a hang-up is a
    /// disconnection. The app keeps its own descriptor and reads it as usual. A new session of the same accessory
    /// replaces the previous one in the system.
    ///
    /// - Throws: ``AccessoryError`` with code `invalidArgument` when no accessory of that name is registered,
    ///   `unavailable` when the daemon cannot be reached, `closed` after ``close()``.
    public func handOff(accessoryNamed name: String) throws(AccessoryError) {
        try handOff(accessoryNamed: name, link: DaemonLink.shared, registry: AccessoryRegistry.shared)
    }

    func handOff(accessoryNamed name: String, link: DaemonLink, registry: AccessoryRegistry) throws(AccessoryError) {
        // The registry keeps a duplicate of its own, to hand off again after a daemon restart whatever the app
        // does with the session meanwhile.
        let copy = state.withLock { $0.fd >= 0 ? fcntl($0.fd, F_DUPFD_CLOEXEC, 0) : -1 }
        guard copy >= 0 else { throw closedError }
        try registry.handOff(copy, name: name, session: ObjectIdentifier(self), link: link)
        state.withLock { $0.name = name }
        self.registry.withLock { $0 = registry }
    }

    /// Closes the session: reading and writing fail from now on, and the SDK no longer hands it off after a daemon
    /// restart. The system's duplicate is closed when the accessory disconnects, when the app unregisters it or hands
    /// off a new session of it, or when the app's process ends. Closing twice is harmless.
    public func close() {
        registry.withLock { $0 }?.sessionClosed(ObjectIdentifier(self))
        state.withLock { state in
            guard state.fd >= 0 else { return }
            let fd = state.fd
            state.fd = -1
            if let watcher = state.watcher {
                // The descriptor may be closed only once the dispatch source has let go of it.
                watcher.cancel { _ = Glibc.close(fd) }
                state.watcher = nil
            } else {
                _ = Glibc.close(fd)
            }
        }
    }

    private var closedError: AccessoryError {
        AccessoryError(.closed, "the session to \(path) is closed", fix: "open a new AccessorySession")
    }
}

/// A dispatch read source on the main queue that calls a session's readability handler.
///
/// `@unchecked Sendable`: the source is only resumed here and cancelled under the session's lock, and a dispatch
/// source is safe to cancel from any thread (it is not marked `Sendable` on Linux).
final class ReadWatcher: @unchecked Sendable {
    let handler: @MainActor @Sendable (AccessorySession) -> Void
    private let source: any DispatchSourceRead

    init(
        fd: Int32, handler: @escaping @MainActor @Sendable (AccessorySession) -> Void,
        session: @escaping @Sendable () -> AccessorySession?
    ) {
        self.handler = handler
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: .main)
        source.setEventHandler {
            MainActor.assumeIsolated {
                if let session = session() { handler(session) }
            }
        }
        source.resume()
    }

    /// Stops calling the handler; `then` runs once the source has let go of the descriptor.
    func cancel(then: (@Sendable () -> Void)? = nil) {
        if let then { source.setCancelHandler(handler: then) }
        source.cancel()
    }
}
