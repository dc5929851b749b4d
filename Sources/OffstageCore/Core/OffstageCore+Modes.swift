/// The long-running background modes joined to the lifecycle (SPEC §7): what the mode components decide becomes
/// callbacks, thaws and suspension decisions here, so the lifecycle code only asks "does any mode hold this app?".
extension OffstageCore {
    /// What each mode says about the app: which keep it running, and which would but may not (SPEC LC-4, MODE-6).
    public func modeHolds(of id: AppID, at now: Instant) -> [ModeHold] {
        guard let entry = apps[id], let process = entry.process else { return [] }
        let context = ModeContext(
            declared: entry.app.manifest.backgroundModes, backgroundActivity: entry.app.settings.backgroundActivity,
            inForeground: process.phase.isForeground, now: now)
        return modes.holds(id, context)
    }

    /// Whether a mode keeps the app running.
    func heldByMode(_ id: AppID, _ now: Instant) -> Bool {
        modeHolds(of: id, at: now).contains { $0.verdict == .holds }
    }

    /// The app's earliest deadline in any mode (even with no process: a relaunch).
    func modeDeadline(of id: AppID) -> Instant? {
        [modes.voip.deadline(of: id, handlerTime: configuration.keepAliveHandler), modes.accessories.deadline(of: id)]
            .compactMap { $0 }.min()
    }

    /// Does what the modes have due for the app at `now`; true when the app was launched (nothing else to settle).
    mutating func settleModes(_ id: AppID, _ now: Instant) -> Bool {
        if modes.voip.expireHandling(id, at: now) { touched.insert(id) }
        if modes.accessories.expireHandling(id, at: now) { touched.insert(id) }
        if apps[id]?.process == nil {
            guard let at = modes.voip.relaunchAt[id], now >= at else { return false }
            modes.voip.relaunchDone(id)
            guard let entry = apps[id], mayLaunchInBackground(entry) else { return false }
            log(now, id, .mode, "launching again: a VoIP app that exited abnormally is relaunched")
            launch(id, .voip, now)
            return true
        }
        if modes.voip.keepAliveMustStart(id, at: now, handlerTime: configuration.keepAliveHandler) {
            runKeepAlives(leadingWith: id, now)
        }
        return false
    }

    /// Where an accessory event goes in a queue the app has not heard yet (SPEC LC-4: events coalesce while it cannot
    /// run): one "data" per accessory is enough (the bytes wait in its session), and of connected and disconnected
    /// only the latest counts, so an accessory that flaps while the app is suspended leaves at most two callbacks.
    static func queueAccessoryEvent(_ name: String, _ event: AccessoryEvent, in queue: [CallbackKind]) -> [CallbackKind] {
        var queue = queue
        if event == .data {
            if !queue.contains(.accessory(name: name, event: .data)) { queue.append(.accessory(name: name, event: .data)) }
            return queue
        }
        queue.removeAll { $0 == .accessory(name: name, event: .connected) || $0 == .accessory(name: name, event: .disconnected) }
        queue.append(.accessory(name: name, event: event))
        return queue
    }

    /// Carries out what a mode component decided.
    mutating func perform(_ actions: [ModeAction], _ now: Instant) {
        for action in actions {
            switch action {
            case .notify(let id, let kind):
                guard let process = apps[id]?.process, process.termination == nil else { continue }
                if case .locations = kind, let queued = process.queue.lastIndex(where: \.isLocations) {
                    // A newer fix replaces one the app has not heard yet: it wants where it is (SPEC LC-4).
                    apps[id]?.process?.queue[queued] = kind
                    touched.insert(id)
                } else if case .accessory(let name, let event) = kind {
                    apps[id]?.process?.queue = Self.queueAccessoryEvent(name, event, in: process.queue)
                    touched.insert(id)
                } else {
                    enqueue(id, kind)
                }
            case .resume(let id, let because):
                guard let process = apps[id]?.process, process.frozen, process.termination == nil else { continue }
                log(now, id, .mode, "resumed: \(because)")
                wakeInBackground(id, now)
            case .reconsider(let id):
                if apps[id]?.process != nil { touched.insert(id) }
            case .log(let id, let message):
                log(now, id, .mode, message)
            case .shell(let action):
                emit(action)
            case .launch(let id, let reason, let because):
                guard apps[id] != nil, apps[id]?.process == nil else { continue }
                log(now, id, .mode, "launching into the background: \(because)")
                launch(id, reason, now)
            case .save(let id):
                guard apps[id] != nil else { continue }
                apps[id]?.durable.significantLocationChange = modes.location.significant[id]
                apps[id]?.durable.accessories = modes.accessories.registrations(of: id)
                emit(.saveApp(id))
            }
        }
    }
}
