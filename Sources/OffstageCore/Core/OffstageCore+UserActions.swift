/// What the user does: open, home, lock, unlock, interruptions, force-quit (SPEC LC-1, LC-2, LC-6, LC-7).
extension OffstageCore {
    /// How an interruption ends.
    public enum InterruptionResolution: String, Sendable, Codable, CaseIterable {
        /// The user dismissed it: the covered app becomes active again.
        case dismiss
        /// The user accepted it: the covered app goes to the background.
        case accept
    }

    /// The user opens an app: the app in front leaves, this one comes to the foreground.
    public mutating func open(_ id: AppID, at now: Instant) throws(CoreError) -> [CoreAction] {
        let entry = try entry(id)
        try checkOpenable(id, entry)
        guard !device.locked else {
            throw CoreError(.deviceLocked, "the device is locked; '\(id)' cannot be opened", fix: "run `offstage unlock` first")
        }
        if device.interruption != nil { device.interruption = nil }
        if device.foregroundApp == id, entry.process?.termination == nil, entry.process != nil {
            if entry.process?.phase == .inactive, entry.process?.queue.contains(.didBecomeActive) == false,
                entry.process?.inFlight?.kind != .didBecomeActive, entry.process?.launchCompleted == true
            {
                enqueue(id, .didBecomeActive)
            }
            return finish(now)
        }
        if let current = device.foregroundApp, current != id { sendToBackground(current, now) }
        bringToForeground(id, now)
        return finish(now)
    }

    /// The user goes to the home screen.
    public mutating func home(at now: Instant) -> [CoreAction] {
        device.interruption = nil
        if let current = device.foregroundApp { sendToBackground(current, now) }
        return finish(now)
    }

    /// The user locks the screen: as home (SPEC LC-2); unlocking returns to the app that was in front.
    public mutating func lock(at now: Instant) -> [CoreAction] {
        guard !device.locked else { return finish(now) }
        device.appBeforeLock = device.foregroundApp
        device.awaitingFirstOpen = false
        device.interruption = nil
        if let current = device.foregroundApp { sendToBackground(current, now, byLock: true) }
        device.locked = true
        device.lockedSince = now
        schedulerDirty = true
        emit(.saveDevice)
        log(now, nil, .device, "locked")
        return finish(now)
    }

    /// The user unlocks the screen and returns to the app that was in front when it was locked, if any — or, with
    /// `returningToApp` false, to the home screen.
    public mutating func unlock(returningToApp: Bool = true, at now: Instant) -> [CoreAction] {
        guard device.locked else { return finish(now) }
        device.locked = false
        device.lockedSince = nil
        schedulerDirty = true
        // The scheduler learns when the user unlocks, and which app is opened first after it (SPEC SCH-5).
        device.awaitingFirstOpen = true
        device.unlocks.recordOpen(at: now, configuration.localClock, halfLifeDays: configuration.usageHalfLifeDays)
        let previous = returningToApp ? device.appBeforeLock : nil
        device.appBeforeLock = nil
        emit(.saveDevice)
        log(now, nil, .device, "unlocked")
        if let previous, let entry = apps[previous], !entry.uninstalling, entry.process?.termination == nil {
            bringToForeground(previous, now)
        }
        return finish(now)
    }

    /// An interruption (an incoming call, an alert). Without a resolution it begins: the app in front resigns
    /// active. With one, it ends (beginning it first if none is in progress).
    public mutating func interrupt(_ resolution: InterruptionResolution?, at now: Instant) throws(CoreError) -> [CoreAction] {
        if device.interruption == nil {
            guard !device.locked else {
                throw CoreError(.deviceLocked, "the device is locked; no app can be interrupted", fix: "run `offstage unlock` first")
            }
            let covered = device.foregroundApp
            device.interruption = DeviceState.Interruption(covering: covered)
            log(now, covered, .device, "interruption began")
            if let covered, apps[covered]?.process?.phase == .active {
                apps[covered]?.process?.phase = .inactive
                log(now, covered, .state, "inactive", state: .inactive)
                enqueue(covered, .willResignActive)
            }
        } else if resolution == nil {
            throw CoreError(
                .invalidArgument, "an interruption is already in progress",
                fix: "end it with `offstage interrupt --dismiss` or `--accept`")
        }
        guard let resolution else { return finish(now) }
        let covered = device.interruption?.covering
        device.interruption = nil
        log(now, covered, .device, "interruption \(resolution == .accept ? "accepted" : "dismissed")")
        guard let covered, device.foregroundApp == covered, let process = apps[covered]?.process,
            process.termination == nil
        else { return finish(now) }
        switch resolution {
        case .dismiss:
            enqueue(covered, .didBecomeActive)
        case .accept:
            sendToBackground(covered, now)
        }
        return finish(now)
    }

    /// The user force-quits an app: killed at once, whatever its state, and not launched in the background
    /// again until the user opens it (SPEC LC-6).
    public mutating func forceQuit(_ id: AppID, at now: Instant) throws(CoreError) -> [CoreAction] {
        let entry = try entry(id)
        if !entry.durable.forceQuit {
            apps[id]?.durable.forceQuit = true
            emit(.saveApp(id))
        }
        apps[id]?.pendingOpen = false
        scheduleAgain(id)
        cancelTransfersOnForceQuit(id, now)
        dropQueuedContinued(id, now)
        if entry.process != nil {
            terminate(id, .forceQuit, .immediate, now)
        } else {
            log(now, id, .terminate, "force-quit while not running: no background launches until opened")
        }
        return finish(now)
    }

    /// The app in front leaves the foreground: did-enter-background, or will-terminate for apps that exit on
    /// suspend (SPEC LC-2, LC-7).
    mutating func sendToBackground(_ id: AppID, _ now: Instant, byLock: Bool = false) {
        if device.foregroundApp == id {
            device.foregroundApp = nil
            emit(.saveDevice)
        }
        guard let entry = apps[id], var process = entry.process, process.termination == nil,
            process.phase.isForeground
        else { return }
        // A did-become-active still queued counts as active: will-resign-active then cancels it unsent.
        let wasActive = process.phase == .active || process.queue.last == .didBecomeActive
        if exitsOnSuspend(entry) {
            process.phase = .inactive
            apps[id]?.process = process
            if wasActive { enqueue(id, .willResignActive) }
            terminate(id, .exitsOnSuspend, .graceful, now)
            return
        }
        process.phase = .background
        process.ledger.enterBackground(at: now, budget: configuration.budget)
        apps[id]?.process = process
        apps[id]?.durable.schedule.usage.recordLeft(at: now, byLock: byLock)
        scheduleAgain(id)
        // The log says "background" when did-enter-background is sent, after will-resign-active (SPEC LC-2 order).
        if wasActive { enqueue(id, .willResignActive) }
        enqueue(id, .didEnterBackground)
    }

    /// Brings an app to the foreground, launching or thawing it as needed.
    mutating func bringToForeground(_ id: AppID, _ now: Instant, reason: LaunchReason = .user) {
        guard let entry = apps[id] else { return }
        device.foregroundApp = id
        emit(.saveDevice)
        if entry.durable.forceQuit || entry.durable.crashLoop.consecutiveCrashes > 0 {
            apps[id]?.durable.forceQuit = false
            apps[id]?.durable.crashLoop.reset()
        }
        // The scheduler learns when the user opens each app (SPEC SCH-5), and which app is opened first after an
        // unlock.
        let (clock, halfLife) = (configuration.localClock, configuration.usageHalfLifeDays)
        apps[id]?.durable.schedule.usage.recordOpen(
            at: now, clock, halfLifeDays: halfLife, firstAfterUnlock: device.awaitingFirstOpen)
        device.awaitingFirstOpen = false
        emit(.saveApp(id))
        scheduleAgain(id)
        perform(transfers.userOpened(id))
        guard let process = entry.process else {
            launch(id, reason, now)
            return
        }
        if process.termination != nil {
            apps[id]?.pendingOpen = true
            log(now, id, .state, "will open once the terminating process has exited")
            return
        }
        if process.frozen { resume(id, now) }
        guard var process = apps[id]?.process, !process.phase.isForeground else { return }
        process.phase = .inactive
        process.suspendAt = nil
        process.ledger.enterForeground()
        apps[id]?.process = process
        log(now, id, .state, "inactive", state: .inactive)
        enqueue(id, .willEnterForeground)
        enqueue(id, .didBecomeActive)
    }
}
