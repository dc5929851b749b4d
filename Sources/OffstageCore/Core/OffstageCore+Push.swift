/// Remote notifications on the device (SPEC NT-4, NT-5): a push the gateway handed in shows its alert like a local
/// notification and, with `content-available`, wakes the app — resuming it or launching it into the background
/// (reason `push`) — and calls its remote-notification handler, which has 30 s and completes with new data, no data
/// or failed; the result teaches the policy as a refresh's does. Background pushes spend the app's budget; over it
/// they are held and coalesced (``PushInbox``). Every push ends with a record (``PushOutcome``).
extension OffstageCore {
    public var pushLimits: PushBudget.Limits {
        PushBudget.Limits(perHour: configuration.backgroundPushesPerHour, burst: configuration.backgroundPushBurst)
    }

    /// A push arrived from the gateway (or is handed in again after a restart: a push whose alert was already
    /// delivered is not shown again).
    public mutating func pushArrived(_ push: RemotePush, at now: Instant) -> [CoreAction] {
        receive(push, now)
        return finish(now)
    }

    /// Puts back the pushes the store kept held over budget, after ``restore(_:durable:)`` of every app; those of
    /// apps no longer installed are finished. Returns the records to persist.
    public mutating func restoreHeldPushes(_ held: [RemotePush]) -> [CoreAction] {
        var actions: [PushAction] = []
        for push in held where apps[push.app] == nil {
            actions.append(.finish(id: push.id, app: push.app, .notDelivered("'\(push.app)' is no longer installed")))
        }
        actions += pushes.restore(held: held.filter { apps[$0.app] != nil })
        return actions.map { .push($0) }
    }

    /// The app's remote-notification handler completed run `run` with `result` (its completion handler). `pid` comes
    /// from the caller's connection. Completing a run that has ended is harmless and logged; a number that is not one
    /// of this process's runs is refused (`noSuchTask`).
    public mutating func completeRemoteNotification(
        _ id: AppID, pid: Int32, run runID: UInt64, result: TaskResult, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        guard let index = apps[id]?.process?.pushRuns.firstIndex(where: { $0.id == runID }),
            let run = apps[id]?.process?.pushRuns.remove(at: index)
        else {
            try requireEndedRun(id, runID, "remote-notification")
            log(now, id, .warning, "completion of finished remote-notification run \(runID) ignored")
            return finish(now)
        }
        endPushRun(id, run, .handled(result), now)
        return finish(now)
    }

    // MARK: Arrival

    ///
    /// - Parameter alreadyShown: The push was held over budget after its alert was shown at arrival: released, only
    ///   its background part is left (the user may have dismissed the alert meanwhile; it does not come back).
    mutating func receive(_ push: RemotePush, _ now: Instant, alreadyShown: Bool = false) {
        guard let entry = apps[push.app], !entry.uninstalling else {
            return finishPush(push, .notDelivered("'\(push.app)' is not installed"), now)
        }
        guard !push.expired(at: now) else { return finishPush(push, .expired, now) }
        let alerts = push.showsAlert || push.aps.badge != nil
        let shown = alerts ? (alreadyShown ? .shown : showPush(push, entry, now)) : nil
        guard push.wakesApp || push.type == .voip else {
            return finishPush(push, shown ?? .notDelivered("it has no alert, sound, badge or content-available"), now)
        }
        if let refusal = wakeRefusal(push, entry, now) {
            return finishPush(push, shown ?? .notDelivered(refusal), now)
        }
        // Shutting down: the push stays accepted in the store and is handed in again at the next start.
        guard !shuttingDown else { return }
        if isActiveInFront(entry) || push.type == .voip {
            startPushRun(push, now)
        } else if Self.wokenAsNewsstand(push, entry) {
            // A newsstand app is woken for a new issue at most once a day (SPEC MODE-5), as the platform did; a later
            // announcement within the day is not held: the next one after it wakes the app.
            if let last = pushes.newsstandWakes[push.app], now < last + .seconds(double: configuration.newsstandWakeInterval) {
                let next = last + .seconds(double: configuration.newsstandWakeInterval)
                return finishPush(
                    push, shown ?? .notDelivered("the app was woken for a new issue less than a day ago; an announcement after \(next.clockTime) wakes it"), now)
            }
            pushes.newsstandWoke(push.app, at: now)
            log(now, push.app, .push, "push \(push.id): a new issue for the newsstand app")
            startPushRun(push, now)
        } else if pushes.takeWake(push.app, at: now, pushLimits) {
            startPushRun(push, now)
        } else if push.attemptOnce {
            finishPush(
                push, shown ?? .notDelivered("it has expiration 0 (deliver now or never) and the app's budget of wakes is spent"), now)
        } else {
            perform(pushes.hold(push), now)
            log(now, push.app, .push, "background push \(push.id) held: the app's budget of \(configuration.backgroundPushBurst) wakes is spent; it is delivered when the budget returns")
        }
    }

    /// Why the app may not be woken for `push`, or nil.
    func wakeRefusal(_ push: RemotePush, _ entry: AppEntry, _ now: Instant) -> String? {
        let modes = entry.app.manifest.backgroundModes
        if push.type == .voip, !modes.contains(.voip) { return "a VoIP push needs the 'voip' background mode" }
        if push.type != .voip, !modes.contains(.remoteNotification), !modes.contains(.newsstandContent), !isActiveInFront(entry) {
            return "the app does not declare the 'remote-notification' background mode"
        }
        if isActiveInFront(entry) { return nil }
        if entry.durable.forceQuit { return "the user force-quit the app; it is not woken until the user opens it" }
        if !entry.app.settings.backgroundActivity { return "background activity is off for the app" }
        if exitsOnSuspend(entry) { return "the app cannot run in the background (it exits on suspend)" }
        if entry.process?.termination != nil { return "the app is being terminated" }
        // Launching it is a background launch like any other: not in a crash loop (SPEC LC-9).
        if entry.process == nil, let notBefore = entry.durable.crashLoop.notBefore, now < notBefore {
            return "the app crashed in the background; no background launch before \(notBefore.clockTime)"
        }
        return nil
    }

    /// Whether `push` wakes its app as a newsstand app's new-issue announcement: a background push to an app that
    /// declares `newsstand-content` and not `remote-notification` (SPEC MODE-5).
    static func wokenAsNewsstand(_ push: RemotePush, _ entry: AppEntry) -> Bool {
        let modes = entry.app.manifest.backgroundModes
        return push.type != .voip && modes.contains(.newsstandContent) && !modes.contains(.remoteNotification)
    }

    func isActiveInFront(_ entry: AppEntry) -> Bool {
        Self.notificationDestination(entry, device) == .app
    }

    /// Shows the push's alert, sound or badge like a local notification firing now; returns `.shown`, or nil when
    /// the user turned the app's notifications off.
    mutating func showPush(_ push: RemotePush, _ entry: AppEntry, _ now: Instant) -> PushOutcome? {
        let aps = push.aps
        let content = NotificationContent(
            title: aps.alert?.title ?? "", subtitle: aps.alert?.subtitle ?? "", body: aps.alert?.body ?? "",
            sound: aps.sound, badge: aps.badge, userInfo: push.payload, threadIdentifier: aps.threadID ?? "",
            categoryIdentifier: aps.category ?? "")
        let request = NotificationRequest(
            identifier: push.notificationIdentifier, content: content, trigger: .date(push.acceptedAt))
        let firings = notifications.deliverNow(
            push.app, request, due: push.acceptedAt, at: now, limits: notificationLimits,
            destination: Self.notificationDestination(entry, device))
        perform(firings.actions)
        for record in firings.toApps {
            log(now, push.app, .notification, "push \(push.id) delivered to the app (will-present)")
            enqueue(push.app, .notificationWillPresent(record))
        }
        guard firings.suppressed.isEmpty else {
            log(now, push.app, .notification, "push \(push.id): not shown, notifications are off for the app")
            return nil
        }
        if firings.actions.contains(where: { if case .show = $0 { true } else { false } }) {
            log(now, push.app, .notification, "push \(push.id) delivered to the user")
        }
        return .shown
    }

    // MARK: Handler runs

    mutating func startPushRun(_ push: RemotePush, _ now: Instant) {
        let id = push.app
        let run = PushRun(
            id: takeNumber(), push: push.id, startedAt: now, deadline: now + configuration.remoteNotificationRuntime,
            onBattery: !conditions(at: now).charging)
        let how: String
        if apps[id]?.process == nil {
            launch(id, push.type == .voip ? .voip : .push, now)
            how = "launched into the background"
        } else if apps[id]?.process?.frozen == true {
            wakeInBackground(id, now)
            how = "resumed"
        } else {
            how = "running"
        }
        apps[id]?.process?.pushRuns.append(run)
        apps[id]?.process?.started(run: run.id)
        enqueue(id, .remoteNotification(RemoteNotificationCall(run: run.id, push: push.id, payload: push.payload)))
        log(now, id, .push, "push \(push.id): remote-notification handler started (\(how))")
        scheduleAgain(id)
        touched.insert(id)
    }

    /// Records the end of a handler run: the push's outcome, and the result for the policy and the daily budget.
    mutating func endPushRun(_ id: AppID, _ run: PushRun, _ outcome: PushOutcome, _ now: Instant) {
        let seconds = (now - run.startedAt).inSeconds
        if var schedule = apps[id]?.durable.schedule {
            if case .handled(let result) = outcome { schedule.results.record(result, at: now, startedAt: run.startedAt) } else {
                schedule.results.record(.failed, at: now)
            }
            if run.onBattery { schedule.budget.spend(seconds, on: configuration.localClock.day(now)) }
            apps[id]?.durable.schedule = schedule
            emit(.saveApp(id))
        }
        emit(.push(.finish(id: run.push, app: id, outcome)))
        log(now, id, .push, "push \(run.push): remote-notification handler \(outcome) after \(format(seconds)) s")
        scheduleAgain(id)
        touched.insert(id)
    }

    /// Terminates the app if a handler overran its 30 s; true when it did.
    mutating func settlePushRuns(_ id: AppID, _ now: Instant) -> Bool {
        guard let overrun = apps[id]?.process?.pushRuns.first(where: { now >= $0.deadline }) else { return false }
        terminate(id, .remoteNotificationOverrun(seconds: (overrun.deadline - overrun.startedAt).inSeconds), .signal, now)
        return true
    }

    /// The process is gone: every handler it was running is cut off.
    mutating func cutOffPushRuns(_ id: AppID, _ status: ExitStatus, _ now: Instant) {
        guard let runs = apps[id]?.process?.pushRuns, !runs.isEmpty else { return }
        apps[id]?.process?.pushRuns = []
        let why = apps[id]?.process?.termination.map { "the app was terminated: \($0.reason)" } ?? "the app \(status)"
        for run in runs { endPushRun(id, run, .cutOff(why), now) }
    }

    // MARK: Held pushes

    /// Delivers the held pushes whose app has budget again, and finishes those that expired.
    mutating func releaseHeldPushes(_ now: Instant) {
        guard let due = pushes.nextRelease(pushLimits), due <= now else { return }
        let (ready, expired) = pushes.release(at: now, pushLimits)
        for push in expired { finishPush(push, .expired, now) }
        for push in ready {
            log(now, push.app, .push, "background push \(push.id) released: the app's budget returned")
            receive(push, now, alreadyShown: true)
        }
    }

    mutating func finishPush(_ push: RemotePush, _ outcome: PushOutcome, _ now: Instant) {
        perform([.finish(id: push.id, app: push.app, outcome)], now)
    }

    /// Carries out the inbox's actions.
    mutating func perform(_ actions: [PushAction], _ now: Instant) {
        for action in actions {
            if case .finish(let id, let app, let outcome) = action { log(now, app, .push, "push \(id): \(outcome)") }
            emit(.push(action))
        }
    }
}
