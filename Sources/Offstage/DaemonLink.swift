import Foundation
import OffstageProtocol
import Synchronization

/// The SDK's two connections to the daemon: a long-lived `Attach` stream that brings callbacks, and a
/// request connection for calls such as `BeginBackgroundTask`. Both reconnect on their own when the daemon
/// restarts; on reattach the SDK reports what it knows so the daemon can re-adopt the app (SPEC LC-8).
final class DaemonLink: Sendable {
    typealias ExpirationHandler = @MainActor @Sendable () -> Void

    struct State: Sendable {
        var launchCompleted = false
        var appState = "notRunning"
        var openTasks: [UInt64: String] = [:]
        var expirationHandlers: [UInt64: ExpirationHandler] = [:]
        /// Recent callback ids, to drop a callback sent again after a reconnect.
        var handled: [UInt64] = []
        var app: AppInterface.AppInfo?
        var attached = false
    }

    /// The process's link: an app has one connection to the system.
    static let shared = DaemonLink(environment: ProcessInfo.processInfo.environment)

    let socketPath: String
    let environment: [String: String]
    private let state = Mutex(State())
    private let requests = Mutex<VarlinkConnection?>(nil)
    private let attached = Mutex<AttachedStream?>(nil)
    /// The daemon inside this process that answers instead of the socket's (the test kit's), if one is set.
    private let inProcess = Mutex<(any InProcessDaemon)?>(nil)
    /// How long a request may wait for the daemon.
    static let requestTimeout: Duration = .seconds(10)

    init(environment: [String: String]) {
        self.environment = environment
        self.socketPath = OffstageSocketPath.resolve(explicit: nil, environment: environment, stateDirectory: nil)
    }

    /// The folder the daemon keeps for this app (``DurableStore`` writes there).
    var dataDirectory: String? {
        state.withLock { $0.app?.dataDirectory } ?? environment["OFFSTAGE_DATA_DIR"]
    }

    // MARK: Attach stream

    /// Starts the thread that keeps the callback stream attached: it connects, attaches, hands the stream to the
    /// main loop (``MainLoop``), which reads the callbacks, and reconnects when the main loop gives it back.
    func start() {
        let thread = Thread { [self] in self.attachLoop() }
        thread.name = "offstage.attach"
        thread.start()
    }

    /// The stream the main loop reads, once attached.
    func attachedStream() -> AttachedStream? {
        attached.withLock { $0 }
    }

    /// The main loop is done with `stream` (it ended or failed): the attach thread reconnects.
    func streamEnded(_ stream: AttachedStream) {
        attached.withLock { if $0 === stream { $0 = nil } }
        stream.connection.close()
        stream.ended.signal()
    }

    private func attachLoop() {
        var attachedBefore = false
        var delay = 0.05
        var waitingReported = false
        while true {
            do {
                let connection = try VarlinkConnection(path: socketPath)
                defer { connection.close() }
                let replies = try connection.callMore(AppInterface.Method.attach, attachReport(), as: AppInterface.AttachReply.self)
                // The first reply says who the app is; callbacks that come with it or before go to the main loop
                // with the stream.
                var early: [AppInterface.CallbackMessage] = []
                while let reply = try replies.next() {
                    if let callback = reply.callback { early.append(callback) }
                    guard let app = reply.app else { continue }
                    state.withLock {
                        $0.app = app
                        $0.attached = true
                    }
                    delay = 0.05
                    waitingReported = false
                    let stream = AttachedStream(connection: connection, replies: replies, earlyCallbacks: early)
                    let again = attachedBefore
                    attachedBefore = true
                    attached.withLock { $0 = stream }
                    if again {
                        DispatchQueue.main.async { MainActor.assumeIsolated { self.reattached() } }
                    }
                    // Wakes the main loop, which polls the new stream from now on.
                    DispatchQueue.main.async {}
                    stream.ended.wait()
                    break
                }
            } catch let error as VarlinkError where error.name.hasSuffix(".NotAnApp") || error.name.hasSuffix(".AlreadyRunning") {
                // Retrying cannot help: this executable is not an installed app, or the app already runs.
                FileHandle.standardError.write(Data("offstage: cannot attach: \(error)\n".utf8))
                exit(78)
            } catch {
                if !waitingReported {
                    FileHandle.standardError.write(Data("offstage: waiting for the daemon at \(socketPath) (\(error))\n".utf8))
                    waitingReported = true
                }
            }
            state.withLock { $0.attached = false }
            Thread.sleep(forTimeInterval: delay)
            // At most a quarter of a second: a daemon restarted by its supervisor finds its apps back at once.
            delay = min(delay * 2, 0.25)
        }
    }

    /// What the SDK tells a daemon it attaches to: whether did-finish-launching ran, the state the app believes it is
    /// in, its open background tasks and its running continued-processing tasks (SPEC LC-8).
    func attachReport() -> AppInterface.AttachParameters {
        let continued = TaskScheduler.shared.continuedRuns()
        return state.withLock { state in
            AppInterface.AttachParameters(
                launchCompleted: state.launchCompleted, state: state.appState,
                openTasks: state.openTasks.sorted { $0.key < $1.key }.map { .init(id: $0.key, name: $0.value) },
                continuedTasks: continued)
        }
    }

    /// Attached again to a restarted daemon, which forgot what the app registered for its modes and which background
    /// sessions it has open: registered and opened again.
    @MainActor
    func reattached() {
        VoIPRegistration.shared.reattached(link: self)
        AccessoryRegistry.shared.reattached(link: self)
        LocationDispatch.shared.reattached()
        TransferDispatch.shared.reattached()
    }

    // MARK: A daemon in this process

    /// Calls go to `daemon` from now on instead of the socket, and what the SDK knew of its previous daemon is
    /// forgotten, as in a process that just started; nil goes back to the socket.
    func use(_ daemon: (any InProcessDaemon)?, app: AppInterface.AppInfo?) {
        inProcess.withLock { $0 = daemon }
        state.withLock { state in
            state = State()
            state.app = app
            state.attached = app != nil
        }
    }

    /// Ends the app's process with `status`, as after will-terminate. With a daemon in this process there is no
    /// process of the app's own to end: that daemon is told the app exited, and this returns.
    func endProcess(status: Int32) {
        guard let daemon = inProcess.withLock({ $0 }) else { exit(status) }
        daemon.processExited(status: status)
    }

    // MARK: Requests

    /// One call on the request connection, reconnecting once if the daemon went away since the last call.
    func request<Parameters: Encodable, Reply: Decodable>(
        _ method: String, _ parameters: Parameters, as type: Reply.Type
    ) throws -> Reply {
        if let daemon = inProcess.withLock({ $0 }) {
            let reply = daemon.answer(try VarlinkCodec.encodeCall(method, parameters))
            switch try VarlinkCodec.decodeReply(reply ?? Data("{}".utf8), as: Reply.self) {
            case .reply(let result, _): return result
            case .error(let error): throw error
            }
        }
        return try requests.withLock { connection in
            var lastError: (any Error)?
            for _ in 0..<2 {
                do {
                    if connection == nil { connection = try VarlinkConnection(path: socketPath) }
                    return try connection!.call(method, parameters, as: type, timeout: Self.requestTimeout)
                } catch let error as VarlinkError {
                    throw error
                } catch {
                    connection?.close()
                    connection = nil
                    lastError = error
                }
            }
            throw lastError!
        }
    }

    /// Hands `fd` to the daemon with a call on its hand-off socket (a descriptor cannot pass on the request
    /// connection); the daemon keeps its own copy. In-process, the daemon gets the descriptor itself.
    func handOff<Parameters: Encodable, Reply: Decodable>(
        fd: Int32, _ method: String, _ parameters: Parameters, as type: Reply.Type
    ) throws -> Reply {
        if let daemon = inProcess.withLock({ $0 }) {
            let reply = daemon.handOff(fd, call: try VarlinkCodec.encodeCall(method, parameters))
            switch try VarlinkCodec.decodeReply(reply, as: Reply.self) {
            case .reply(let result, _): return result
            case .error(let error): throw error
            }
        }
        return try SocketHandOff.send(
            fd: fd, to: ModesInterface.handOffSocketPath(forMain: socketPath), method: method, parameters: parameters, as: type)
    }

    /// A call the daemon answers with nothing (`oneway`), on the request connection: the caller does not wait for a
    /// reply, and calls on the connection keep their order.
    func notify<Parameters: Encodable>(_ method: String, _ parameters: Parameters) throws {
        if let daemon = inProcess.withLock({ $0 }) {
            _ = daemon.answer(try VarlinkCodec.encodeCall(method, parameters, oneway: true))
            return
        }
        try requests.withLock { connection in
            var lastError: (any Error)?
            for _ in 0..<2 {
                do {
                    if connection == nil { connection = try VarlinkConnection(path: socketPath) }
                    return try connection!.oneway(method, parameters, timeout: Self.requestTimeout)
                } catch {
                    connection?.close()
                    connection = nil
                    lastError = error
                }
            }
            throw lastError!
        }
    }

    /// Tells the daemon a callback's handler returned. Oneway: the app goes on at once (a lifecycle transition is a
    /// chain of callbacks, and waiting for an empty reply to each doubled its thread hops).
    func callbackDone(_ id: UInt64) {
        do {
            try notify(AppInterface.Method.callbackDone, AppInterface.CallbackDoneParameters(id: id))
        } catch {
            // The daemon sends the callback again after it restarts; the answer is given then.
            FileHandle.standardError.write(Data("offstage: could not answer callback \(id): \(error)\n".utf8))
        }
    }

    /// Whether this callback id is new (true) or a repeat after a reconnect (false).
    func firstDelivery(of id: UInt64) -> Bool {
        state.withLock { state in
            if state.handled.contains(id) { return false }
            state.handled.append(id)
            if state.handled.count > 256 { state.handled.removeFirst(state.handled.count - 256) }
            return true
        }
    }

    func launchCompleted(state appState: String) {
        state.withLock {
            $0.launchCompleted = true
            $0.appState = appState
        }
    }

    func stateChanged(_ appState: String) {
        state.withLock { $0.appState = appState }
    }

    // MARK: Background tasks

    func beginBackgroundTask(name: String, expirationHandler: ExpirationHandler?) -> BackgroundTaskIdentifier {
        do {
            let reply = try request(
                AppInterface.Method.beginBackgroundTask, AppInterface.BeginParameters(name: name),
                as: AppInterface.BeginReply.self)
            guard reply.id != 0 else { return .invalid }
            state.withLock { state in
                state.openTasks[reply.id] = name
                if let expirationHandler { state.expirationHandlers[reply.id] = expirationHandler }
            }
            return BackgroundTaskIdentifier(rawValue: reply.id)
        } catch {
            FileHandle.standardError.write(Data("offstage: beginBackgroundTask failed: \(error)\n".utf8))
            return .invalid
        }
    }

    func endBackgroundTask(_ identifier: BackgroundTaskIdentifier) {
        guard identifier != .invalid else { return }
        state.withLock { state in
            state.openTasks[identifier.rawValue] = nil
            state.expirationHandlers[identifier.rawValue] = nil
        }
        do {
            _ = try request(
                AppInterface.Method.endBackgroundTask, AppInterface.EndParameters(id: identifier.rawValue),
                as: AppInterface.EndReply.self)
        } catch {
            // Without the daemon the task is already forgotten locally; the reattach report leaves it out.
            FileHandle.standardError.write(Data("offstage: endBackgroundTask failed: \(error)\n".utf8))
        }
    }

    /// The handler of a task whose time is running out; each is given out once.
    func takeExpirationHandler(_ identifier: BackgroundTaskIdentifier) -> ExpirationHandler? {
        state.withLock { $0.expirationHandlers.removeValue(forKey: identifier.rawValue) }
    }

    func backgroundTimeRemaining() -> Double {
        if let reply = try? request(
            AppInterface.Method.backgroundTimeRemaining, NoParameters(), as: AppInterface.TimeRemainingReply.self)
        {
            return reply.seconds
        }
        let foreground = state.withLock { $0.appState == "active" || $0.appState == "inactive" }
        return foreground ? .greatestFiniteMagnitude : 0
    }

    func isMultitaskingSupported() -> Bool {
        if let reply = try? request(AppInterface.Method.getDevice, NoParameters(), as: AppInterface.DeviceReply.self) {
            return reply.multitaskingSupported
        }
        return state.withLock { $0.app?.multitaskingSupported } ?? true
    }
}

/// A callback stream attached to the daemon, read by the main loop.
final class AttachedStream: Sendable {
    let connection: VarlinkConnection
    let replies: VarlinkReplyStream<AppInterface.AttachReply>
    /// Signalled by the main loop when the stream has ended or failed.
    let ended = DispatchSemaphore(value: 0)
    private let early: Mutex<[AppInterface.CallbackMessage]>

    init(
        connection: VarlinkConnection, replies: VarlinkReplyStream<AppInterface.AttachReply>,
        earlyCallbacks: [AppInterface.CallbackMessage]
    ) {
        self.connection = connection
        self.replies = replies
        self.early = Mutex(earlyCallbacks)
    }

    /// The callbacks that came with the first reply, once.
    func takeEarlyCallbacks() -> [AppInterface.CallbackMessage] {
        early.withLock { callbacks in
            defer { callbacks = [] }
            return callbacks
        }
    }
}
