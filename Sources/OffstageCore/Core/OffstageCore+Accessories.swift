/// Accessory inputs (SPEC MODE-4): an app's registrations and sessions, and what the shell sees of each accessory.
/// `pid` always comes from the caller's connection, so an app can only change its own accessories.
extension OffstageCore {
    /// The app registers an accessory; `present` is whether its path exists now (the shell looked). Without the
    /// accessory's mode in the manifest it fails (SPEC MODE-6) and nothing changes.
    public mutating func registerAccessory(
        _ id: AppID, pid: Int32, _ registration: AccessoryRegistration, present: Bool, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        let declared = apps[id]?.app.manifest.backgroundModes ?? []
        do {
            perform(
                try modes.accessories.register(
                    id, registration, declared: declared, present: present, limit: configuration.maximumAccessoriesPerApp),
                now)
        } catch {
            log(now, id, .warning, "accessory registration refused: \(error.message)")
            throw error
        }
        return finish(now)
    }

    /// The app unregisters an accessory.
    public mutating func unregisterAccessory(_ id: AppID, pid: Int32, name: String, at now: Instant) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        perform(try modes.accessories.unregister(id, name), now)
        return finish(now)
    }

    /// The app handed the shell an open channel to its registered accessory `name`, known by `token`: the shell
    /// watches it while the app is suspended. Refused for an unknown accessory: the shell then closes it itself.
    public mutating func accessorySessionHandedOff(
        _ id: AppID, pid: Int32, name: String, token: UInt64, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        let process = try runningProcess(id, pid: pid)
        perform(try modes.accessories.sessionHandedOff(id, name, token: token, frozen: process.frozen), now)
        return finish(now)
    }

    /// The shell looked at the path of the app's accessory `name`: it exists (connected) or not.
    public mutating func accessoryPresence(_ id: AppID, name: String, connected: Bool, at now: Instant) -> [CoreAction] {
        performWaking(
            id,
            modes.accessories.presence(
                id, name, connected: connected, recipient: accessoryRecipient(id, now), now: now,
                handlingTime: configuration.accessoryEvent),
            now)
        scheduleAgain(id)
        return finish(now)
    }

    /// The shell saw data or a hang-up on a socket or accessory session the app handed off (known by `token`).
    public mutating func socketEvent(_ id: AppID, token: UInt64, closed: Bool, at now: Instant) -> [CoreAction] {
        guard let name = modes.accessories.accessory(withSession: token, of: id) else {
            return voipSocketEvent(id, token: token, closed: closed, at: now)
        }
        performWaking(
            id,
            modes.accessories.sessionEvent(
                id, name, closed: closed, recipient: accessoryRecipient(id, now), now: now,
                handlingTime: configuration.accessoryEvent),
            now)
        scheduleAgain(id)
        return finish(now)
    }

    /// As if the app's accessory connected, disconnected or sent data (`offstage accessory event`): the same effects,
    /// for tests and for accessories the daemon cannot see (Bluetooth without an adapter).
    public mutating func simulateAccessoryEvent(
        _ id: AppID, name: String, _ event: AccessoryEvent, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try entry(id)
        performWaking(
            id,
            try modes.accessories.simulate(
                id, name, event, recipient: accessoryRecipient(id, now), now: now, handlingTime: configuration.accessoryEvent),
            now)
        scheduleAgain(id)
        return finish(now)
    }

    /// The shell started: every registered accessory is watched again (registrations outlive the daemon).
    public mutating func watchAccessories(at now: Instant) -> [CoreAction] {
        perform(modes.accessories.watchAll(), now)
        return finish(now)
    }

    /// Carries out what the accessory component decided when the app's accessory did something. An app it thawed
    /// starts a fresh background-task budget, as one resumed for a scheduled run does: its last one may have ended
    /// long ago, and it may begin a background task to get more than the handling time (SPEC MODE-4, BT-2).
    private mutating func performWaking(_ id: AppID, _ actions: [ModeAction], _ now: Instant) {
        let wasFrozen = apps[id]?.process?.frozen == true
        perform(actions, now)
        guard wasFrozen, let process = apps[id]?.process, !process.frozen, process.termination == nil,
            process.phase == .background
        else { return }
        let budget = configuration.budget
        apps[id]?.process?.ledger.enterBackground(at: now, budget: budget)
        touched.insert(id)
    }

    /// What the accessory component needs to know of the app when its accessory does something.
    func accessoryRecipient(_ id: AppID, _ now: Instant) -> ModeRecipient {
        guard let entry = apps[id] else { return .gone }
        if let process = entry.process, process.termination == nil {
            return .running(frozen: process.frozen, mayWake: entry.app.settings.backgroundActivity)
        }
        return .notRunning(whyNot: whyNotLaunchedForAccessory(entry, now))
    }

    /// Why the system may not launch the app for its accessory, or nil when it may: not after a force-quit (SPEC
    /// LC-6), nor with background activity off (SET-2), in a crash loop (LC-9), for an app that cannot be in the
    /// background (LC-7), while uninstalling, while its previous process ends, or while shutting down.
    func whyNotLaunchedForAccessory(_ entry: AppEntry, _ now: Instant) -> String? {
        if entry.durable.forceQuit { return "the user force-quit it; it runs again once the user opens it" }
        if exitsOnSuspend(entry) { return "it cannot run in the background (it exits on suspend, or multitasking is off)" }
        return whyNotLaunchedForLocation(entry, now)
    }
}
