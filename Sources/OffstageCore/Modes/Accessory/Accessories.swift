/// Accessory apps (SPEC MODE-4): the accessories each app registered, whether each is connected, the session each
/// app handed off, and the time an app has to handle what happened.
///
/// A registration outlives the app's process (it is part of the app's durable state): the shell watches the
/// accessory's path the whole time. When it appears, the app is woken or, if it is not running and the system may,
/// launched into the background (launch reason `accessory`); when it goes, the app is woken. A session is the open
/// channel the app handed off: the shell watches it only while the app is frozen, and data (or a hang-up, which is a
/// disconnection) wakes the app. Each event gives the app `accessoryEventTime` (about 10 s) before it may be suspended
/// again; a background task buys more.
public struct Accessories: Hashable, Sendable {
    /// One registered accessory of an app.
    public struct Link: Hashable, Sendable {
        /// What the app registered.
        public var registration: AccessoryRegistration
        /// Whether its path exists; nil until the shell has looked (after a restart), so the first report changes
        /// nothing the app hears.
        public var connected: Bool?
        /// The channel the app handed off.
        public var session: Session?
    }

    /// The channel to an accessory that the app handed off, known by the shell's token.
    public struct Session: Hashable, Sendable {
        /// The shell's token for it.
        public var token: UInt64
        /// Whether the shell watches it now (only while the app is frozen).
        public var armed: Bool
    }

    /// An app handling an accessory event: it stays running until `until`.
    public struct Handling: Hashable, Sendable {
        /// The end of the time it has.
        public var until: Instant
        /// The accessory's name.
        public var name: String
        /// The accessory's mode, for the hold.
        public var mode: BackgroundMode
        /// What happened.
        public var event: AccessoryEvent
    }

    /// Registered accessories, by app and name.
    public private(set) var links: [AppID: [String: Link]] = [:]
    /// Apps handling an accessory event.
    public private(set) var handling: [AppID: Handling] = [:]

    /// No accessory registered.
    public init() {}

    /// The app's registrations, by name (what its durable state keeps).
    public func registrations(of app: AppID) -> [AccessoryRegistration] {
        (links[app] ?? [:]).values.map(\.registration).sorted { $0.name < $1.name }
    }

    // MARK: Registrations

    /// Restores the registrations kept in the app's durable state, after a restart: connection unknown, no session.
    /// Only those in a mode the app declares (SPEC MODE-6) come back; a name kept twice (a damaged store) once.
    mutating func restore(_ app: AppID, _ registrations: [AccessoryRegistration], declared: Set<BackgroundMode>) {
        let kept = registrations.filter { declared.contains($0.mode) }
        guard !kept.isEmpty else { return }
        links[app] = Dictionary(kept.map { ($0.name, Link(registration: $0)) }, uniquingKeysWith: { first, _ in first })
    }

    /// Watches every registered accessory (the shell started).
    func watchAll() -> [ModeAction] {
        links.keys.sorted().flatMap { app in
            links[app, default: [:]].keys.sorted().compactMap { name in
                links[app]?[name].map { .shell(.watchAccessory(app, name: name, path: $0.registration.path)) }
            }
        }
    }

    /// The app registers an accessory; `present` is whether its path exists now (the shell looked). Registering the
    /// same accessory again changes nothing; a new path for a name replaces the old registration and its session.
    mutating func register(
        _ app: AppID, _ registration: AccessoryRegistration, declared: Set<BackgroundMode>, present: Bool, limit: Int
    ) throws(CoreError) -> [ModeAction] {
        let registration = try registration.validated()
        guard declared.contains(registration.mode) else {
            throw CoreError(
                .notPermitted,
                "'\(app)' does not declare the '\(registration.mode.rawValue)' background mode, so its accessories do not wake it",
                fix: "add '\(registration.mode.rawValue)' to UIBackgroundModes in the app's Info.plist")
        }
        var actions: [ModeAction] = []
        if let existing = links[app]?[registration.name] {
            if existing.registration == registration { return [] }
            actions += closeSession(app, registration.name)
            actions.append(.shell(.unwatchAccessory(app, name: registration.name)))
        } else if links[app, default: [:]].count >= limit {
            throw CoreError(
                .invalidArgument, "'\(app)' already registered \(limit) accessories, the most an app may",
                fix: "unregister one it no longer uses first")
        }
        links[app, default: [:]][registration.name] = Link(registration: registration, connected: present)
        return actions + [
            .shell(.watchAccessory(app, name: registration.name, path: registration.path)), .save(app),
            .log(app, "accessory '\(registration.name)' registered at \(registration.path) (\(present ? "connected" : "not connected"))"),
        ]
    }

    /// The app was upgraded: a registration in a mode the new version does not declare ends, as registering it would
    /// now be refused; otherwise its accessory would still wake or launch the app (SPEC MODE-6).
    mutating func manifestChanged(_ app: AppID, declared: Set<BackgroundMode>) -> [ModeAction] {
        let dropped = registrations(of: app).filter { !declared.contains($0.mode) }
        guard !dropped.isEmpty else { return [] }
        var actions: [ModeAction] = []
        for registration in dropped {
            actions += closeSession(app, registration.name)
            links[app]?[registration.name] = nil
            if handling[app]?.name == registration.name { handling[app] = nil }
            actions += [
                .shell(.unwatchAccessory(app, name: registration.name)),
                .log(
                    app, "accessory '\(registration.name)' unregistered: this version does not declare "
                        + "'\(registration.mode.rawValue)'"),
            ]
        }
        if links[app]?.isEmpty == true { links[app] = nil }
        return actions + [.save(app), .reconsider(app)]
    }

    /// The app unregisters an accessory: it is not watched any more.
    mutating func unregister(_ app: AppID, _ name: String) throws(CoreError) -> [ModeAction] {
        guard links[app]?[name] != nil else { throw Self.unknown(app, name) }
        var actions = closeSession(app, name)
        links[app]?[name] = nil
        if links[app]?.isEmpty == true { links[app] = nil }
        if handling[app]?.name == name { handling[app] = nil }
        actions += [.shell(.unwatchAccessory(app, name: name)), .save(app), .log(app, "accessory '\(name)' unregistered")]
        return actions + [.reconsider(app)]
    }

    // MARK: Events

    /// The shell saw the accessory's path appear or disappear (or looked for the first time).
    mutating func presence(
        _ app: AppID, _ name: String, connected: Bool, recipient: ModeRecipient, now: Instant, handlingTime: Duration
    ) -> [ModeAction] {
        guard let link = links[app]?[name] else { return [] }
        links[app]?[name]?.connected = connected
        guard let previous = link.connected else {
            return [.log(app, "accessory '\(name)' is \(connected ? "connected" : "not connected")")]
        }
        guard previous != connected else { return [] }
        let actions = connected ? [] : closeSession(app, name)
        return actions + wake(app, name, connected ? .connected : .disconnected, recipient, now, handlingTime)
    }

    /// The app handed the shell an open channel to a registered accessory (known by `token`); a previous one of the
    /// same accessory is closed.
    mutating func sessionHandedOff(_ app: AppID, _ name: String, token: UInt64, frozen: Bool) throws(CoreError) -> [ModeAction] {
        guard links[app]?[name] != nil else { throw Self.unknown(app, name) }
        var actions = closeSession(app, name)
        links[app]?[name]?.session = Session(token: token, armed: frozen)
        actions += [.shell(.watchSocket(app, token: token, armed: frozen)), .log(app, "accessory '\(name)' session handed off")]
        return actions
    }

    /// The accessory whose session the shell knows by `token`, if any.
    func accessory(withSession token: UInt64, of app: AppID) -> String? {
        links[app]?.first { $0.value.session?.token == token }?.key
    }

    /// The shell saw data or a hang-up on a watched session. A hang-up means the accessory went away.
    mutating func sessionEvent(
        _ app: AppID, _ name: String, closed: Bool, recipient: ModeRecipient, now: Instant, handlingTime: Duration
    ) -> [ModeAction] {
        // An event for a session that was replaced, closed or is not watched any more comes too late: dropped.
        guard let session = links[app]?[name]?.session, session.armed else { return [] }
        links[app]?[name]?.session?.armed = false
        guard closed else { return wake(app, name, .data, recipient, now, handlingTime) }
        let actions = closeSession(app, name)
        guard links[app]?[name]?.connected != false else { return actions }
        links[app]?[name]?.connected = false
        return actions + wake(app, name, .disconnected, recipient, now, handlingTime)
    }

    /// As if the accessory connected, disconnected or sent data (`offstage accessory event`): the app hears it as
    /// from the device; a watched session stops being watched, as a real event would have made it.
    mutating func simulate(
        _ app: AppID, _ name: String, _ event: AccessoryEvent, recipient: ModeRecipient, now: Instant, handlingTime: Duration
    ) throws(CoreError) -> [ModeAction] {
        guard let link = links[app]?[name] else { throw Self.unknown(app, name) }
        var actions: [ModeAction] = [.log(app, "accessory '\(name)' \(event) simulated (forced)")]
        switch event {
        case .connected:
            links[app]?[name]?.connected = true
        case .disconnected:
            actions += closeSession(app, name)
            links[app]?[name]?.connected = false
        case .data:
            if let session = link.session, session.armed {
                links[app]?[name]?.session?.armed = false
                actions.append(.shell(.watchSocket(app, token: session.token, armed: false)))
            }
        }
        return actions + wake(app, name, event, recipient, now, handlingTime)
    }

    /// Tells the app what happened: wakes it (or launches it for a connection) when the system may, with
    /// `handlingTime` to handle it.
    private mutating func wake(
        _ app: AppID, _ name: String, _ event: AccessoryEvent, _ recipient: ModeRecipient, _ now: Instant,
        _ handlingTime: Duration
    ) -> [ModeAction] {
        guard let mode = links[app]?[name]?.registration.mode else { return [] }
        let what = event == .data ? "accessory '\(name)' sent data" : "accessory '\(name)' \(event)"
        let handle = Handling(until: now + handlingTime, name: name, mode: mode, event: event)
        switch recipient {
        case .gone:
            links[app] = nil
            return []
        case .running(frozen: _, mayWake: false):
            // Nothing of the app runs in the background (SPEC SET-2): it hears of it when it runs again.
            return [.log(app, what), .notify(app, .accessory(name: name, event: event))]
        case .running(frozen: let frozen, mayWake: true):
            handling[app] = handle
            return [.log(app, what)] + (frozen ? [.resume(app, because: what)] : [])
                + [.notify(app, .accessory(name: name, event: event)), .reconsider(app)]
        case .notRunning(whyNot: nil) where event == .connected:
            handling[app] = handle
            return [.launch(app, .accessory, because: what), .notify(app, .accessory(name: name, event: event)), .reconsider(app)]
        case .notRunning(whyNot: let why?) where event == .connected:
            return [.log(app, "\(what), but the app is not launched: \(why)")]
        case .notRunning:
            return [.log(app, what)]
        }
    }

    // MARK: The process

    /// The app is frozen: its sessions are watched.
    mutating func frozen(_ app: AppID) -> [ModeAction] { setArmed(app, true) }

    /// The app runs again: it reads its sessions itself.
    mutating func thawed(_ app: AppID) -> [ModeAction] { setArmed(app, false) }

    private mutating func setArmed(_ app: AppID, _ armed: Bool) -> [ModeAction] {
        var actions: [ModeAction] = []
        for name in (links[app] ?? [:]).keys.sorted() {
            guard let session = links[app]?[name]?.session, session.armed != armed else { continue }
            links[app]?[name]?.session?.armed = armed
            actions.append(.shell(.watchSocket(app, token: session.token, armed: armed)))
        }
        return actions
    }

    /// The app's process is gone: its sessions close with it; its registrations stay, so a connection launches it.
    mutating func processEnded(_ app: AppID) -> [ModeAction] {
        handling[app] = nil
        return (links[app] ?? [:]).keys.sorted().flatMap { closeSession(app, $0) }
    }

    /// The app is uninstalled: nothing of it is watched any more.
    mutating func forget(_ app: AppID) -> [ModeAction] {
        let actions = processEnded(app) + (links[app] ?? [:]).keys.sorted().map { .shell(.unwatchAccessory(app, name: $0)) }
        links[app] = nil
        return actions
    }

    /// Whether the app is handling an accessory event (it stays running meanwhile).
    func hold(_ app: AppID, _ context: ModeContext) -> ModeHold? {
        guard let handling = handling[app], handling.until > context.now else { return nil }
        let doing = "handling accessory '\(handling.name)' (\(handling.event)) until \(handling.until.clockTime)"
        guard context.declared.contains(handling.mode) else {
            return ModeHold(handling.mode, .denied, "\(doing), but \(ModeContext.undeclared(handling.mode))")
        }
        return ModeHold(handling.mode, .holds, doing)
    }

    /// The end of the app's handling time.
    func deadline(of app: AppID) -> Instant? { handling[app]?.until }

    /// Drops a handling window that ended.
    mutating func expireHandling(_ app: AppID, at now: Instant) -> Bool {
        guard let until = handling[app]?.until, until <= now else { return false }
        handling[app] = nil
        return true
    }

    private mutating func closeSession(_ app: AppID, _ name: String) -> [ModeAction] {
        guard let session = links[app]?[name]?.session else { return [] }
        links[app]?[name]?.session = nil
        return [.shell(.closeSocket(app, token: session.token))]
    }

    private static func unknown(_ app: AppID, _ name: String) -> CoreError {
        CoreError(
            .invalidArgument, "'\(app)' has registered no accessory \(QuotedText.quote(name))",
            fix: "register it first (AccessoryManager.register), or check the name with `offstage accessory`")
    }
}
