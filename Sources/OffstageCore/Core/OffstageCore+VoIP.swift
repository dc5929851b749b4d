/// VoIP inputs (SPEC MODE-2): the keep-alive timeout, the handed-off socket and its events, and launching VoIP apps
/// at boot and after an abnormal exit. `pid` always comes from the caller's connection.
extension OffstageCore {
    /// The app sets (or, with nil, clears) its keep-alive timeout. Below `keepAliveMinimumTimeout` (600 s) or without
    /// the `voip` mode it fails, and nothing changes.
    public mutating func setKeepAliveTimeout(_ id: AppID, pid: Int32, seconds: Double?, at now: Instant) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        let declared = apps[id]?.app.manifest.backgroundModes.contains(.voip) ?? false
        perform(
            try modes.voip.setKeepAlive(
                id, seconds: seconds, declared: declared, minimum: configuration.keepAliveMinimumTimeout, now: now),
            now)
        scheduleAgain(id)
        return finish(now)
    }

    /// The app handed the shell a connected socket, which the shell knows by `token`; the shell watches it while the
    /// app is suspended. Refused without the `voip` mode: the shell then closes the socket itself.
    public mutating func socketHandedOff(_ id: AppID, pid: Int32, token: UInt64, at now: Instant) throws(CoreError) -> [CoreAction] {
        let process = try runningProcess(id, pid: pid)
        let declared = apps[id]?.app.manifest.backgroundModes.contains(.voip) ?? false
        perform(try modes.voip.handOff(id, token: token, declared: declared, frozen: process.frozen), now)
        return finish(now)
    }

    /// The shell saw data or a hang-up on the socket `token` of the app: it is woken to handle it.
    public mutating func voipSocketEvent(_ id: AppID, token: UInt64, closed: Bool, at now: Instant) -> [CoreAction] {
        guard let entry = apps[id], entry.process?.termination == nil else { return finish(now) }
        var actions = modes.voip.socketEvent(id, token: token, closed: closed, now: now, handlingTime: configuration.voipSocketEvent)
        if !entry.app.settings.backgroundActivity {
            // Nothing of the app runs in the background (SPEC SET-2): the app hears of it when it runs again.
            actions.removeAll { if case .resume = $0 { true } else { false } }
        }
        perform(actions, now)
        scheduleAgain(id)
        return finish(now)
    }

    /// As if data (or a hang-up) arrived on the socket the app handed off (`offstage voip data`): the same effects,
    /// for tests without a signalling server. The shell stops watching the socket, as a real event would have made it.
    public mutating func simulateVoIPSocketEvent(_ id: AppID, closed: Bool, at now: Instant) throws(CoreError) -> [CoreAction] {
        _ = try entry(id)
        guard let socket = modes.voip.sockets[id] else {
            throw CoreError(
                .invalidArgument, "'\(id)' has not handed off a socket",
                fix: "the app must call setVoIPSocket(_:handler:) first (it needs the 'voip' mode)")
        }
        guard socket.armed else {
            throw CoreError(
                .invalidArgument, "'\(id)' is running and reads its socket itself; the socket is watched only while it is suspended",
                fix: "send it to the background (`offstage home`) and wait until `offstage apps` shows it suspended")
        }
        log(now, id, .mode, "socket \(closed ? "hang-up" : "data") simulated (forced)")
        emit(.watchSocket(id, token: socket.token, armed: false))
        return voipSocketEvent(id, token: socket.token, closed: closed, at: now)
    }

    /// The daemon started: every VoIP app that is not running is launched into the background (launch reason
    /// `boot`), except those the user force-quit or whose background activity is off.
    public mutating func launchAtBoot(at now: Instant) -> [CoreAction] {
        for id in apps.keys.sorted() {
            guard let entry = apps[id], entry.process == nil, entry.app.manifest.backgroundModes.contains(.voip),
                mayLaunchInBackground(entry)
            else { continue }
            // LC-9: a crash loop's delay outlives the daemon; the app is launched when it has passed, not at once.
            if let notBefore = entry.durable.crashLoop.notBefore, now < notBefore {
                modes.voip.relaunch(id, at: notBefore)
                log(now, id, .mode, "VoIP app launched at \(notBefore.clockTime), when the delay after its repeated crashes ends")
                scheduleAgain(id)
                continue
            }
            launch(id, .boot, now)
        }
        return finish(now)
    }

    /// Whether the system may launch the app into the background for its modes: not force-quit (LC-6), background
    /// activity on (SET-2), able to be in the background at all (LC-7), not being uninstalled, not shutting down.
    func mayLaunchInBackground(_ entry: AppEntry) -> Bool {
        !entry.durable.forceQuit && entry.app.settings.backgroundActivity && !exitsOnSuspend(entry) && !entry.uninstalling
            && !shuttingDown
    }

    /// When to launch a VoIP app again whose process just ended: after an abnormal exit, once its crash-loop delay
    /// has passed, and never sooner than the first such delay (SPEC MODE-2, LC-9); nil when it is not launched again.
    func voipRelaunch(_ entry: AppEntry, _ status: ExitStatus, _ now: Instant) -> Instant? {
        // Force-quit and uninstall mark the entry before the process ends, so they are seen here (LC-6).
        guard entry.app.manifest.backgroundModes.contains(.voip), status.isAbnormal, mayLaunchInBackground(entry)
        else { return nil }
        let first = now + .seconds(double: configuration.crashLoopInitialDelay)
        return max(first, entry.durable.crashLoop.notBefore ?? first)
    }

    /// Starts the keep-alive handler of `leader` (due now, it wakes the device if it sleeps) and of every app whose
    /// keep-alive window is open, sharing the wake-up (SPEC SCH-7). With no leader, only those in their window join
    /// a wake-up that happens anyway.
    mutating func runKeepAlives(leadingWith leader: AppID?, _ now: Instant) {
        let joining = modes.voip.keepAlivesDue(
            at: now, joiningWakeUp: true, handlerTime: configuration.keepAliveHandler, tolerance: configuration.keepAliveWindow)
        let due = (leader.map { [$0] } ?? []) + joining.filter { $0 != leader }
        var started: [AppID] = []
        for id in due {
            // The next timeout counts from now whatever happens below, so a handler that cannot run now does not
            // leave a deadline in the past.
            modes.voip.keepAliveStarted(id, at: now)
            scheduleAgain(id)
            guard let entry = apps[id], let process = entry.process, process.termination == nil,
                process.inFlight?.kind != .keepAlive, !process.queue.contains(.keepAlive)
            else { continue }
            if !entry.app.settings.backgroundActivity {
                log(now, id, .mode, "keep-alive handler skipped: background activity is off for this app")
                continue
            }
            if process.frozen { wakeInBackground(id, now) }
            enqueue(id, .keepAlive)
            started.append(id)
            scheduleAgain(id)
        }
        if leader != nil, !started.isEmpty, !isAwakeBefore(started) {
            log(now, nil, .wakeup, "device woke for the keep-alive handler of \(started.map(\.rawValue).joined(separator: ", "))")
        }
    }

    /// Whether the device was awake before these keep-alives started (the screen on, or other work running).
    private func isAwakeBefore(_ keepAlives: [AppID]) -> Bool {
        !device.locked
            || apps.contains { id, entry in
                !keepAlives.contains(id) && entry.process.map { !$0.frozen && !$0.runs.isEmpty } ?? false
            }
    }
}
