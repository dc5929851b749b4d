/// VoIP apps (SPEC MODE-2): their keep-alive handlers, the socket each handed to the daemon, and when to launch them
/// again.
///
/// A VoIP app is suspended like any other; the system wakes it for three things. Its keep-alive handler runs before
/// each timeout expires, joining a wake-up that happens anyway when its window is open (SCH-7), with
/// `keepAliveHandlerTime` (30 s) before the app is terminated. Data (or a hang-up) on the socket it handed off wakes it
/// while it is suspended: the shell watches the socket only then, and the app has `voipSocketEventTime` to handle it.
/// And an app that exits abnormally is launched again (throttled as any crash loop, LC-9).
public struct VoIPMode: Hashable, Sendable {
    /// A keep-alive handler's schedule.
    public struct KeepAlive: Hashable, Sendable {
        /// The app's timeout: its handler runs at least this often.
        public var interval: Duration
        /// When the current timeout expires; the handler runs before.
        public var expiresAt: Instant
    }

    /// A socket the app handed off, watched by the shell while the app is suspended.
    public struct HandedOffSocket: Hashable, Sendable {
        /// The shell's token for the socket.
        public var token: UInt64
        /// Whether the shell is watching it now (only while the app is frozen).
        public var armed: Bool
    }

    /// Keep-alive schedules, by app.
    public private(set) var keepAlives: [AppID: KeepAlive] = [:]
    /// Handed-off sockets, by app (one each).
    public private(set) var sockets: [AppID: HandedOffSocket] = [:]
    /// Until when an app that was woken by its socket may handle it before it can be suspended again.
    public private(set) var handlingUntil: [AppID: Instant] = [:]
    /// When to launch an app again that exited abnormally.
    public private(set) var relaunchAt: [AppID: Instant] = [:]

    /// No VoIP app known.
    public init() {}

    // MARK: Keep-alive

    /// Sets (or, with nil, clears) the app's keep-alive timeout (`setKeepAliveTimeout(_:handler:)`).
    mutating func setKeepAlive(
        _ app: AppID, seconds: Double?, declared: Bool, minimum: Double, now: Instant
    ) throws(CoreError) -> [ModeAction] {
        guard let seconds else {
            guard keepAlives.removeValue(forKey: app) != nil else { return [] }
            return [.log(app, "keep-alive handler cleared"), .reconsider(app)]
        }
        guard declared else {
            throw CoreError(
                .notPermitted, "'\(app)' does not declare the 'voip' background mode, so it has no keep-alive handler",
                fix: "add 'voip' to UIBackgroundModes in the app's Info.plist")
        }
        if seconds.isFinite, seconds < minimum {
            throw CoreError(
                .invalidArgument, "a keep-alive timeout of \(format(seconds)) s is too short",
                fix: "use at least \(format(minimum)) s")
        }
        let interval = try CoreError.checking { () throws(NumberOutOfRange) in
            try CheckedNumber.duration(seconds: seconds, field: "seconds", in: minimum ... CheckedNumber.longestDuration)
        }
        keepAlives[app] = KeepAlive(interval: interval, expiresAt: now + interval)
        return [.log(app, "keep-alive handler every \(format(seconds)) s at most"), .reconsider(app)]
    }

    /// The apps whose keep-alive handler should start now: those whose timeout expires within `handlerTime` (it must
    /// have run by then), and, when the device is awake anyway or wakes for other work, those within `tolerance`.
    func keepAlivesDue(at now: Instant, joiningWakeUp: Bool, handlerTime: Duration, tolerance: Duration) -> [AppID] {
        keepAlives.filter { _, keepAlive in
            now >= keepAlive.expiresAt - handlerTime || (joiningWakeUp && now >= keepAlive.expiresAt - tolerance)
        }.keys.sorted()
    }

    /// Whether the app's keep-alive handler must start now, at the latest, to have its time before the timeout.
    func keepAliveMustStart(_ app: AppID, at now: Instant, handlerTime: Duration) -> Bool {
        keepAlives[app].map { now >= $0.expiresAt - handlerTime } ?? false
    }

    /// The app's keep-alive handler starts: the next timeout counts from now.
    mutating func keepAliveStarted(_ app: AppID, at now: Instant) {
        guard let keepAlive = keepAlives[app] else { return }
        keepAlives[app]?.expiresAt = now + keepAlive.interval
    }

    // MARK: The handed-off socket

    /// The app handed the shell a socket (known by `token`); a previous one is closed.
    mutating func handOff(_ app: AppID, token: UInt64, declared: Bool, frozen: Bool) throws(CoreError) -> [ModeAction] {
        guard declared else {
            throw CoreError(
                .notPermitted, "'\(app)' does not declare the 'voip' background mode, so no socket of it is watched",
                fix: "add 'voip' to UIBackgroundModes in the app's Info.plist")
        }
        var actions: [ModeAction] = []
        if let previous = sockets[app] {
            actions += [.shell(.closeSocket(app, token: previous.token)), .log(app, "the previous VoIP socket is closed")]
        }
        sockets[app] = HandedOffSocket(token: token, armed: frozen)
        actions += [.shell(.watchSocket(app, token: token, armed: frozen)), .log(app, "VoIP socket handed off")]
        return actions
    }

    /// The app is frozen: its socket is watched.
    mutating func frozen(_ app: AppID) -> [ModeAction] {
        guard let socket = sockets[app], !socket.armed else { return [] }
        sockets[app]?.armed = true
        return [.shell(.watchSocket(app, token: socket.token, armed: true))]
    }

    /// The app runs again: the app reads its socket itself.
    mutating func thawed(_ app: AppID) -> [ModeAction] {
        guard let socket = sockets[app], socket.armed else { return [] }
        sockets[app]?.armed = false
        return [.shell(.watchSocket(app, token: socket.token, armed: false))]
    }

    /// The shell saw data (or a hang-up) on a watched socket: the app is woken to handle it, with `handlingTime`.
    mutating func socketEvent(
        _ app: AppID, token: UInt64, closed: Bool, now: Instant, handlingTime: Duration
    ) -> [ModeAction] {
        // An event for a socket that was replaced, closed or is not watched any more comes too late: dropped.
        guard let socket = sockets[app], socket.token == token, socket.armed else { return [] }
        sockets[app]?.armed = false
        handlingUntil[app] = now + handlingTime
        var actions: [ModeAction] = [
            .log(app, closed ? "the VoIP socket was closed by its peer" : "data arrived on the VoIP socket"),
            .resume(app, because: closed ? "its VoIP socket was closed" : "data arrived on its VoIP socket"),
            .notify(app, .voipSocket(closed: closed)),
        ]
        if closed {
            sockets[app] = nil
            actions.append(.shell(.closeSocket(app, token: token)))
        }
        return actions + [.reconsider(app)]
    }

    // MARK: The process

    /// The app's process is gone: its handler and socket with it; after an abnormal exit it is launched again at
    /// `relaunch` (nil: not at all).
    mutating func processEnded(_ app: AppID, relaunch: Instant?) -> [ModeAction] {
        var actions: [ModeAction] = []
        keepAlives[app] = nil
        handlingUntil[app] = nil
        if let socket = sockets.removeValue(forKey: app) { actions.append(.shell(.closeSocket(app, token: socket.token))) }
        relaunchAt[app] = relaunch
        return actions
    }

    /// The app was launched (or forgotten): no relaunch is pending any more.
    mutating func relaunchDone(_ app: AppID) { relaunchAt[app] = nil }

    /// The app, not running, is to be launched at `at` (its crash-loop delay outlived a daemon restart).
    mutating func relaunch(_ app: AppID, at: Instant) { relaunchAt[app] = at }

    /// Whether the app is handling its socket's data (it stays running meanwhile).
    func hold(_ app: AppID, _ context: ModeContext) -> ModeHold? {
        guard let until = handlingUntil[app], until > context.now else { return nil }
        return ModeHold(.voip, .holds, "handling its VoIP socket until \(until.clockTime)")
    }

    /// The app's earliest VoIP deadline: its keep-alive's latest start, the end of handling, or a relaunch.
    func deadline(of app: AppID, handlerTime: Duration) -> Instant? {
        [keepAlives[app].map { $0.expiresAt - handlerTime }, handlingUntil[app], relaunchAt[app]].compactMap { $0 }.min()
    }

    /// Drops handling windows that ended.
    mutating func expireHandling(_ app: AppID, at now: Instant) -> Bool {
        guard let until = handlingUntil[app], until <= now else { return false }
        handlingUntil[app] = nil
        return true
    }
}
