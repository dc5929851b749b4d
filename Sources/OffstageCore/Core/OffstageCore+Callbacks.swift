/// Callbacks go to an app one at a time, in order: the next is sent when the previous one has returned.
/// That keeps the core's view of what the app is doing exact, lets it drop pairs that cancel out, and means
/// nothing is ever half-delivered to a process that is about to be frozen. The one exception is a pair the app
/// always runs back to back (``AppProcess/sentBehind``): its second callback goes out with the first.
extension OffstageCore {
    /// Queues a callback, dropping a queued pair that cancels out (became active and resigned before the
    /// app heard of either; entered foreground and background again).
    mutating func enqueue(_ id: AppID, _ kind: CallbackKind) {
        guard var process = apps[id]?.process else { return }
        if case .systemEvent(let event) = kind {
            let canRun = process.attached && !process.frozen && process.launchCompleted
            Self.queueSystemEvent(event, in: &process.queue, appCanRun: canRun)
            apps[id]?.process = process
            touched.insert(id)
            return
        }
        switch (process.queue.last, kind) {
        case (.didBecomeActive?, .willResignActive), (.willEnterForeground?, .didEnterBackground):
            process.queue.removeLast()
        default:
            process.queue.append(kind)
        }
        apps[id]?.process = process
        touched.insert(id)
    }

    /// Sends the next queued callback if the app can receive it now.
    mutating func pump(_ id: AppID, _ now: Instant) {
        guard var process = apps[id]?.process, let pid = process.pid, process.attached, !process.frozen else { return }
        if let termination = process.termination, termination.stage > .willTerminate { return }
        if process.resendInFlight, let inFlight = process.inFlight {
            // The stream reconnected: the same callbacks again, same ids and deadlines (see `detached`).
            process.resendInFlight = false
            apps[id]?.process = process
            for callback in [inFlight] + (process.sentBehind.map { [$0] } ?? []) {
                emit(.deliver(id, pid: pid, callback))
                log(now, id, .callback, "\(callback.kind.description) (again, after the callback stream reconnected)")
            }
            return
        }
        guard process.inFlight == nil, !process.queue.isEmpty else { return }
        let kind = process.queue.removeFirst()
        let callback = send(id, kind, &process, deadline: deadline(of: kind, process, now), now)
        process.inFlight = callback
        if let follower = process.queue.first, Self.runBackToBack(kind, follower), let start = callback.deadline {
            process.queue.removeFirst()
            process.sentBehind = send(id, follower, &process, deadline: start + timeout(for: follower), now)
        }
        apps[id]?.process = process
    }

    /// Whether the app always runs `second` right after `first`, so both can be sent at once: the two halves of
    /// leaving the foreground. (Coming back is not pipelined: a did-become-active still queued behind
    /// will-enter-foreground is dropped if the user leaves again at once, which a sent one could not be.)
    static func runBackToBack(_ first: CallbackKind, _ second: CallbackKind) -> Bool {
        first == .willResignActive && second == .didEnterBackground
    }

    /// When the app's handler for `kind`, sent now, must have returned.
    func deadline(of kind: CallbackKind, _ process: AppProcess, _ now: Instant) -> Instant? {
        switch kind {
        case .didFinishLaunching: process.launchDeadline
        case .didEnterBackground: now + configuration.didEnterBackground
        case .willTerminate: process.termination?.escalateAt ?? now + configuration.willTerminate
        case .backgroundTasksExpiring: nil  // the budget's end bounds it
        case .runTask, .performFetch, .taskExpiring, .remoteNotification: nil  // the run's runtime and grace bound it
        case .transferEvents: now + configuration.callback  // the SDK answers at once; a run, if any, bounds the handler
        case .didBecomeActive, .willEnterForeground, .willResignActive, .audioInterruption, .systemEvent, .locations,
            .locationError, .notificationWillPresent, .notificationResponse, .memoryWarning:
            now + configuration.callback
        case .keepAlive: now + configuration.keepAliveHandler
        case .voipSocket: now + configuration.voipSocketEvent
        case .accessory: now + configuration.accessoryEvent
        }
    }

    /// Sends a callback of `kind`: its state change is logged as it goes out (the app's state is what the app has
    /// been told).
    private mutating func send(
        _ id: AppID, _ kind: CallbackKind, _ process: inout AppProcess, deadline: Instant?, _ now: Instant
    ) -> Callback {
        switch kind {
        case .didEnterBackground:
            log(now, id, .state, "background", state: .background)
        case .didBecomeActive where process.phase == .inactive:
            process.phase = .active
            log(now, id, .state, "active", state: .active)
        default:
            break
        }
        let callback = Callback(id: CallbackID(takeNumber()), kind: kind, deadline: deadline)
        emit(.deliver(id, pid: process.pid ?? 0, callback))
        log(now, id, .callback, kind.description)
        return callback
    }

    /// The app's handler for a callback returned.
    public mutating func callbackCompleted(_ id: AppID, pid: Int32, callback: CallbackID, at now: Instant) -> [CoreAction] {
        guard var process = apps[id]?.process, process.pid == pid else { return finish(now) }
        if let behind = process.sentBehind, behind.id == callback {
            // The SDK runs and answers them in order: an answer to the second means the app is past both handlers.
            process.inFlight = nil
            process.sentBehind = nil
            process.resendInFlight = false
            apps[id]?.process = process
            log(now, id, .callbackDone, "\(behind.kind.description) (its answer came first)")
            touched.insert(id)
            return finish(now)
        }
        guard let inFlight = process.inFlight, inFlight.id == callback else {
            log(now, id, .warning, "answer to unknown callback \(callback) ignored")
            return finish(now)
        }
        // The callback sent behind this one is now the one the app runs: its watchdog counts from now, as if it had
        // been sent now (the deadline it went out with, which allowed for the one ahead, is never earlier).
        if var behind = process.sentBehind, let deadline = behind.deadline {
            behind.deadline = min(deadline, now + timeout(for: behind.kind))
            process.inFlight = behind
        } else {
            process.inFlight = process.sentBehind
        }
        process.sentBehind = nil
        if process.inFlight == nil { process.resendInFlight = false }
        if case .didFinishLaunching = inFlight.kind {
            process.launchCompleted = true
            process.launchDeadline = nil
        }
        apps[id]?.process = process
        if case .notificationWillPresent(let record) = inFlight.kind {
            // Returned without choosing: as on a phone, a notification for the app in front is not shown.
            perform(notifications.appAnswered(record.key, presentToUser: false, limits: notificationLimits))
        }
        log(now, id, .callbackDone, inFlight.kind.description)
        touched.insert(id)
        return finish(now)
    }

    /// Brings every part of an app up to date at `now`: due expirations, watchdogs, escalations, the next
    /// callback, and the suspension decision.
    mutating func settle(_ id: AppID, _ now: Instant) {
        if settleModes(id, now) { return }
        guard let process = apps[id]?.process else { return }
        if let termination = process.termination {
            if let at = termination.escalateAt, now >= at { escalate(id, now) }
            pump(id, now)
            return
        }
        if !process.launchCompleted, let deadline = process.launchDeadline, now >= deadline {
            return terminate(id, .launchTimeout(seconds: configuration.launchTimeout), .signal, now)
        }
        if !process.attached, let deadline = process.reattachDeadline, now >= deadline {
            return terminate(id, .didNotReattach(seconds: configuration.reattachTimeout), .signal, now)
        }
        if let inFlight = process.inFlight, let deadline = inFlight.deadline, now >= deadline {
            let seconds = timeout(for: inFlight.kind).inSeconds
            return terminate(id, .callbackTimeout(callback: inFlight.kind.description, seconds: seconds), .signal, now)
        }
        if settleRuns(id, now) { return }
        if settlePushRuns(id, now) { return }
        settleTransferRuns(id, now)
        if let overrun = process.ledger.overrunDue, now >= overrun {
            let tasks = process.ledger.tasks
            let longest = tasks.map { (now - $0.begunAt).inSeconds }.max() ?? 0
            return terminate(id, .backgroundTaskOverrun(tasks: tasks.map(\.name), seconds: longest), .signal, now)
        }
        let expiring = apps[id]?.process?.ledger.takeExpiring(at: now) ?? []
        if !expiring.isEmpty {
            log(now, id, .taskExpire, "expiration handlers due for task \(expiring.map(\.description).joined(separator: ", "))")
            enqueue(id, .backgroundTasksExpiring(expiring))
            touched.remove(id)
        }
        pump(id, now)
        decideSuspension(id, now)
    }

    /// An idle app in the background is suspended `suspendDelay` after it became idle (SPEC LC-4, BT-2).
    mutating func decideSuspension(_ id: AppID, _ now: Instant) {
        guard var process = apps[id]?.process else { return }
        let idle = process.phase == .background && process.launchCompleted && process.attached && !process.frozen
            && process.termination == nil && !process.isBusy && !heldByMode(id, now)
        if !idle {
            process.suspendAt = nil
        } else {
            // Idle since `suspendAt - delay`; with no delay the freeze happens now, not one timer turn later.
            let at = process.suspendAt ?? now + configuration.suspend
            if now >= at, let pid = process.pid {
                process.suspendAt = nil
                process.frozen = true
                process.phase = .suspended
                process.suspendedBecause = suspensionReason(id, now)
                emit(.freeze(id, pid: pid))
                log(now, id, .state, "suspended", state: .suspended)
                apps[id]?.process = process
                perform(modes.frozen(id), now)
                return
            } else {
                process.suspendAt = at
            }
        }
        apps[id]?.process = process
    }

    /// Why an idle app is suspended: nothing held it, and the modes that would have but may not.
    func suspensionReason(_ id: AppID, _ now: Instant) -> String {
        let denied = modeHolds(of: id, at: now).filter { $0.verdict == .denied }
        guard !denied.isEmpty else { return "nothing kept it running (no background task, active mode or running task)" }
        return "no mode may keep it running: " + denied.map(\.description).joined(separator: "; ")
    }

    /// Thaws a suspended app so it can run again (in the background until something moves it to the front).
    mutating func resume(_ id: AppID, _ now: Instant) {
        guard var process = apps[id]?.process, process.frozen, let pid = process.pid else { return }
        process.frozen = false
        process.phase = .background
        process.suspendedBecause = nil
        apps[id]?.process = process
        emit(.thaw(id, pid: pid))
        log(now, id, .thaw, "thawed")
        perform(modes.thawed(id), now)
        touched.insert(id)
        scheduleAgain(id)
    }

    /// Thaws a suspended app for background work the system woke it for (a scheduled run, a mode's event): each such
    /// wake starts a fresh background-task budget, as a launch into the background does (SPEC BT-3), so a task the
    /// app begins to finish that work has its time however long it was suspended before.
    mutating func wakeInBackground(_ id: AppID, _ now: Instant) {
        guard apps[id]?.process?.frozen == true else { return }
        resume(id, now)
        let budget = configuration.budget
        apps[id]?.process?.ledger.enterBackground(at: now, budget: budget)
    }

    func timeout(for kind: CallbackKind) -> Duration {
        switch kind {
        case .didFinishLaunching: configuration.launch
        case .didEnterBackground: configuration.didEnterBackground
        case .willTerminate: configuration.willTerminate
        // A run's handler is bounded by the run's own deadline, not a callback watchdog.
        case .backgroundTasksExpiring, .runTask, .performFetch, .taskExpiring, .remoteNotification: .zero
        case .willEnterForeground, .didBecomeActive, .willResignActive, .audioInterruption, .systemEvent, .locations,
            .locationError, .notificationWillPresent, .notificationResponse, .transferEvents, .memoryWarning:
            configuration.callback
        case .keepAlive: configuration.keepAliveHandler
        case .voipSocket: configuration.voipSocketEvent
        case .accessory: configuration.accessoryEvent
        }
    }
}
