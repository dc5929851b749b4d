import COffstageSystem
import Glibc
import Synchronization

/// What happened on a watched socket.
public enum SocketEvent: Sendable, Hashable {
    /// Data arrived; it is still in the socket, unread, for the app.
    case readable
    /// The peer hung up or the socket failed (`EPOLLRDHUP`, `EPOLLHUP` or `EPOLLERR`). It takes precedence over
    /// `readable` when both hold: the app is to be woken either way, and data sent before the hang-up is still there.
    case closed
}

/// Watches sockets that apps handed off (SPEC MODE-2) without ever reading them, and reports when one becomes
/// readable or is closed, so that the daemon can wake the app that owns it.
///
/// One thread sleeps in `epoll_wait` with no timeout; an eventfd wakes it only to stop (changes to the epoll set take
/// effect in a blocked `epoll_wait` without waking it). Registrations are one-shot
/// (`EPOLLONESHOT`): after an event the socket is not watched again until ``arm(_:)``, because the daemon only cares
/// while the app is frozen, and after waking the app it stops watching until it freezes the app again.
///
/// ```swift
/// let watcher = try SocketWatcher { token, event in daemon.wake(appWithToken: token, because: event) }
/// try watcher.watch(fd: received, token: 42)     // armed: the app is frozen
/// ...                                            // .readable arrives once; the app is woken
/// try watcher.arm(42)                            // the app was frozen again
/// watcher.remove(42)                             // the app exited: closes the daemon's copy
/// ```
///
/// ## Callbacks
/// The handler runs on the watcher's thread, with no lock held, so it may call back into the watcher. It should
/// return quickly: other sockets' events wait behind it. An event the thread has already taken from the kernel may
/// still be reported once after ``disarm(_:)`` or ``remove(_:)`` returns on another thread; a handler ignores tokens
/// it no longer cares about.
public final class SocketWatcher: Sendable {
    /// Receives each event with the token its socket was watched under.
    public typealias Handler = @Sendable (_ token: UInt64, _ event: SocketEvent) -> Void

    /// One watched socket.
    private struct Entry {
        /// The watcher's own descriptor of it.
        let fd: Int32
        /// The epoll data of this registration: never reused, so an event of a removed registration is not taken
        /// for one of a later registration under the same token.
        let serial: UInt64
        /// In the epoll set (armed, or fired and disabled by the kernel) rather than taken out by `disarm`.
        var registered: Bool
    }

    /// Everything that changes, behind one lock.
    private struct State {
        /// The watched sockets by token.
        var entries: [UInt64: Entry] = [:]
        /// The token of each live registration serial: what the thread looks events up in.
        var tokens: [UInt64: UInt64] = [:]
        /// The next registration's serial; 0 is the wake-up eventfd's.
        var nextSerial: UInt64 = 1
        /// `stop()` was called, or the thread ended.
        var stopping = false
        /// The thread's kernel id while it runs.
        var threadID: Int32?
    }

    /// The events an armed socket is watched for. `EPOLLRDHUP` reports a peer's hang-up even with no data to read.
    private static let armedEvents = OFFSTAGE_EPOLLIN | OFFSTAGE_EPOLLRDHUP | OFFSTAGE_EPOLLONESHOT
    /// The events that mean the peer hung up or the socket failed.
    private static let hangUpEvents = OFFSTAGE_EPOLLRDHUP | OFFSTAGE_EPOLLHUP | OFFSTAGE_EPOLLERR
    /// The epoll data of the wake-up eventfd.
    private static let wakeSerial: UInt64 = 0

    /// Receives the events.
    private let handler: Handler
    /// The epoll set; the thread closes it when it ends.
    private let epoll: Int32
    /// The eventfd that wakes the thread to stop; the thread closes it when it ends.
    private let wake: Int32
    /// Ready registrations taken per `epoll_wait`.
    private let batchSize: Int
    /// The registrations and the phase.
    private let state = Mutex(State())
    /// The thread, once started.
    private let thread = Mutex<WatcherThread?>(nil)

    /// Starts the watcher's thread. The thread holds the watcher until ``stop()``: call it when done.
    ///
    /// - Throws: ``SocketWatcherError/systemCallFailed(call:errno:)`` when epoll, the eventfd or the thread cannot be
    ///   made.
    public init(settings: SocketHandOffSettings = .default, handler: @escaping Handler) throws(SocketWatcherError) {
        self.handler = handler
        batchSize = max(1, min(settings.watcherBatchSize, 64))
        epoll = offstage_epoll_create()
        guard epoll >= 0 else { throw .systemCallFailed(call: "epoll_create1", errno: errno) }
        wake = offstage_eventfd()
        guard wake >= 0 else {
            let code = errno
            close(epoll)
            throw .systemCallFailed(call: "eventfd", errno: code)
        }
        guard offstage_epoll_add_events(epoll, wake, OFFSTAGE_EPOLLIN, Self.wakeSerial) == 0 else {
            let code = errno
            close(wake)
            close(epoll)
            throw .systemCallFailed(call: "epoll_ctl", errno: code)
        }
        do {
            let started = try WatcherThread(name: settings.watcherThreadName) { [self] in run() }
            thread.withLock { $0 = started }
        } catch {
            close(wake)
            close(epoll)
            throw .systemCallFailed(call: "pthread_create", errno: (error as? ProcessControlError)?.errno ?? 0)
        }
    }

    /// Starts watching `fd` under `token`; the watcher owns `fd` from now on and closes it on ``remove(_:)`` or
    /// ``stop()`` (or at once, when this throws).
    ///
    /// - Parameter armed: Whether to report the first event now; `false` registers it for a later ``arm(_:)``.
    /// - Throws: `tokenInUse` when `token` already names a socket; `stopped` after ``stop()``; `systemCallFailed`
    ///   when epoll refuses `fd` (not pollable).
    public func watch(fd: Int32, token: UInt64, armed: Bool = true) throws(SocketWatcherError) {
        let result: Result<Void, SocketWatcherError> = state.withLock { state in
            guard !state.stopping else { return .failure(.stopped) }
            guard state.entries[token] == nil else { return .failure(.tokenInUse(token)) }
            let serial = state.nextSerial
            if armed, offstage_epoll_add_events(epoll, fd, Self.armedEvents, serial) != 0 {
                return .failure(.systemCallFailed(call: "epoll_ctl", errno: errno))
            }
            state.nextSerial += 1
            state.entries[token] = Entry(fd: fd, serial: serial, registered: armed)
            state.tokens[serial] = token
            return .success(())
        }
        if case .failure(let error) = result {
            close(fd)
            throw error
        }
    }

    /// Watches `token`'s socket again, for one event: after an event was reported, or after ``disarm(_:)``.
    /// Arming an armed socket does nothing more.
    ///
    /// - Throws: `unknownToken`, `stopped`, or `systemCallFailed`.
    public func arm(_ token: UInt64) throws(SocketWatcherError) {
        try change(token) { entry throws(SocketWatcherError) in
            // A registration that fired stays in the set, disabled by the kernel: modified back on. One taken out by
            // `disarm` is added again.
            let operation = entry.registered ? offstage_epoll_modify_events : offstage_epoll_add_events
            guard operation(epoll, entry.fd, Self.armedEvents, entry.serial) == 0 else {
                throw .systemCallFailed(call: "epoll_ctl", errno: errno)
            }
            entry.registered = true
        }
    }

    /// Stops watching `token`'s socket until ``arm(_:)``, keeping it open.
    ///
    /// The registration is taken out of the epoll set rather than given an empty event mask: epoll always reports
    /// `EPOLLHUP` and `EPOLLERR`, even for an empty mask.
    ///
    /// - Throws: `unknownToken` or `stopped`.
    public func disarm(_ token: UInt64) throws(SocketWatcherError) {
        try change(token) { entry throws(SocketWatcherError) in
            if entry.registered { _ = offstage_epoll_remove(epoll, entry.fd) }
            entry.registered = false
        }
    }

    /// Stops watching `token`'s socket and closes the watcher's descriptor of it (the app keeps its own). Removing
    /// an unknown token does nothing.
    public func remove(_ token: UInt64) {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: token) else { return }
            state.tokens[entry.serial] = nil
            // Closing takes the descriptor out of the epoll set too, unless another copy of it is open.
            if entry.registered { _ = offstage_epoll_remove(epoll, entry.fd) }
            close(entry.fd)
        }
    }

    /// Stops the thread and closes every watched descriptor. Later calls throw `stopped`; stopping twice does nothing.
    /// Called from the handler, it returns at once and the thread ends after the handler returns.
    public func stop() {
        let first = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.stopping = true
            var one: UInt64 = 1
            _ = Glibc.write(wake, &one, MemoryLayout<UInt64>.size)
            return true
        }
        guard first, let running = thread.withLock({ $0 }), !running.isCurrent else { return }
        running.join()
    }

    /// How many sockets are watched (armed or not).
    public var watchedCount: Int { state.withLock { $0.entries.count } }

    /// The kernel id of the watcher's thread while it runs (a name in `/proc/self/task`), for tests.
    var threadID: Int32? { state.withLock { $0.threadID } }

    // MARK: - Internals

    /// Applies `body` to `token`'s entry under the lock, unless the watcher is stopping or the token unknown.
    private func change(_ token: UInt64, _ body: (inout Entry) throws(SocketWatcherError) -> Void)
        throws(SocketWatcherError)
    {
        let result: Result<Void, SocketWatcherError> = state.withLock { state in
            guard !state.stopping else { return .failure(.stopped) }
            guard var entry = state.entries[token] else { return .failure(.unknownToken(token)) }
            do throws(SocketWatcherError) {
                try body(&entry)
            } catch {
                return .failure(error)
            }
            state.entries[token] = entry
            return .success(())
        }
        try result.get()
    }

    /// The thread: waits, looks each ready registration's token up, and reports it with no lock held.
    private func run() {
        state.withLock { $0.threadID = offstage_gettid() }
        // Allocated once: the path from readiness to the handler allocates nothing.
        let serials = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: batchSize)
        let events = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: batchSize)
        defer {
            serials.deallocate()
            events.deallocate()
            closeEverything()
        }
        while true {
            let count = offstage_epoll_wait_events(epoll, serials.baseAddress, events.baseAddress, Int32(batchSize), -1)
            if count < 0 {
                if errno == EINTR { continue }
                // Nothing else can fail on a valid epoll descriptor; stop rather than spin.
                return
            }
            for index in 0..<Int(count) {
                let serial = serials[index]
                if serial == Self.wakeSerial {
                    var value: UInt64 = 0
                    _ = Glibc.read(wake, &value, MemoryLayout<UInt64>.size)
                    if state.withLock({ $0.stopping }) { return }
                    continue
                }
                guard let token = state.withLock({ $0.tokens[serial] }) else { continue }
                handler(token, events[index] & Self.hangUpEvents != 0 ? .closed : .readable)
            }
        }
    }

    /// Closes every watched descriptor, the epoll set and the eventfd, as the thread ends.
    private func closeEverything() {
        state.withLock { state in
            state.stopping = true
            state.threadID = nil
            for entry in state.entries.values { close(entry.fd) }
            state.entries.removeAll()
            state.tokens.removeAll()
            close(epoll)
            close(wake)
        }
    }
}

/// Why a ``SocketWatcher`` call failed.
public enum SocketWatcherError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The watcher was stopped.
    case stopped
    /// `token` already names a watched socket.
    case tokenInUse(UInt64)
    /// No socket is watched under `token`.
    case unknownToken(UInt64)
    /// A system call failed with `errno`.
    case systemCallFailed(call: String, errno: Int32)

    /// What went wrong.
    public var description: String {
        switch self {
        case .stopped: "The socket watcher was stopped; it watches nothing more."
        case .tokenInUse(let token): "A socket is already watched under token \(token); remove it first."
        case .unknownToken(let token): "No socket is watched under token \(token)."
        case .systemCallFailed(let call, let code):
            "\(call) failed in the socket watcher: \(String(cString: strerror(code))) (errno \(code))."
        }
    }
}
