/// Continued processing (SPEC SCH-11): work the user started in the foreground goes on in the background with reported
/// progress, visible to the user and cancellable by them. A queued request waits for one of the device's slots; under
/// pressure the tasks reporting the least progress are ended first, with the reason recorded. The decisions are
/// ``ContinuedProcessingPolicy``'s; this routes inputs to it and carries out what it decides.
extension OffstageCore {
    var continuedPolicy: ContinuedProcessingPolicy { ContinuedProcessingPolicy(limits: configuration.continuedProcessing) }

    /// Submits a continued-processing request from the app in the foreground: it starts now if a slot is free, else
    /// it is queued, or refused with strategy `fail`.
    mutating func submitContinued(_ id: AppID, _ process: AppProcess, _ request: TaskRequest, _ now: Instant) throws(CoreError) {
        let entry = try entry(id)
        let details = request.continued ?? ContinuedTaskDetails(title: request.identifier)
        try validateContinuedText(details.title, "title", required: true)
        try validateContinuedText(details.subtitle, "subtitle", required: false)
        guard request.earliestBegin == nil else {
            throw CoreError(
                .invalidArgument, "a continued-processing request has no earliest begin date: the user is waiting for it",
                fix: "leave earliestBeginDate nil")
        }
        guard entry.app.manifest.permits(request.identifier, .continued) else {
            throw CoreError(
                .notPermitted, "'\(request.identifier)' is not in the BGTaskSchedulerPermittedIdentifiers of '\(id)'",
                fix: "list it, or a pattern such as '\(id).export.*' that covers it, and install the app again")
        }
        guard process.phase.isForeground, device.foregroundApp == id else {
            throw CoreError(
                .notPermitted, "'\(id)' is in the background: continued processing is work the user starts in the foreground",
                fix: "submit the request in response to a user action while the app is in the foreground")
        }
        if let reason = continuedUnavailability(entry) {
            throw CoreError(.unavailable, "continued processing is not available to '\(id)': \(reason)", fix: unavailableFix(entry))
        }
        if process.runs.contains(where: { $0.request.identifier == request.identifier }) {
            throw CoreError(
                .invalidArgument, "continued-processing task '\(request.identifier)' of '\(id)' is already running",
                fix: "give each task the user starts an identifier of its own, e.g. '\(request.identifier).2'")
        }
        let queued = entry.durable.schedule.requests.values.filter { $0.kind == .continued }
        let limit = configuration.continuedProcessing.maximumQueuedPerApp
        if entry.durable.schedule.requests[request.identifier]?.kind != .continued, queued.count >= limit {
            throw CoreError(
                .tooManyPendingRequests, "'\(id)' already has \(queued.count) continued-processing requests queued, the most allowed",
                fix: "wait for one to start, or cancel one (cancel(taskRequestWithIdentifier:))")
        }
        var stored = request
        stored.submittedAt = now
        stored.continued = details
        let (free, running) = continuedSlotsFree(now)
        if free > 0 {
            continuedApps.insert(id)
            startRun(id, stored, forced: false, now, why: "submitted in the foreground")
            return
        }
        guard details.strategy == .queue else {
            let names = running.map { "'\($0.app)': \(QuotedText.quote($0.progress.title))" }.joined(separator: ", ")
            throw CoreError(
                .unavailable,
                "no continued-processing slot is free for '\(request.identifier)'\(names.isEmpty ? "" : ": \(running.count) running (\(names))")",
                fix: "submit it with strategy queue to wait for a slot, or try again when one of them ends")
        }
        let replacing = entry.durable.schedule.requests[request.identifier] != nil
        apps[id]?.durable.schedule.requests[request.identifier] = stored
        emit(.saveApp(id))
        continuedApps.insert(id)
        log(now, id, .schedule, "\(replacing ? "replaced" : "queued") continued-processing request '\(request.identifier)' (\(QuotedText.quote(details.title)))")
        scheduleAgain(id)
    }

    /// The app reports progress of a running continued-processing task; each report renews its time.
    public mutating func reportTaskProgress(
        _ id: AppID, pid: Int32, run runID: UInt64, completed: Int64, total: Int64, title: String?, subtitle: String?,
        at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        guard completed >= 0, total >= 0 else {
            throw CoreError(
                .invalidArgument, "progress of run \(runID) is \(completed) of \(total): neither may be negative",
                fix: "report completedUnitCount and totalUnitCount ≥ 0")
        }
        if let title { try validateContinuedText(title, "title", required: true) }
        if let subtitle { try validateContinuedText(subtitle, "subtitle", required: false) }
        guard let index = apps[id]?.process?.runs.firstIndex(where: { $0.id == runID }),
            var run = apps[id]?.process?.runs[index]
        else {
            try requireEndedRun(id, runID, "task")
            log(now, id, .warning, "progress of finished task run \(runID) ignored")
            return finish(now)
        }
        guard var progress = run.progress else {
            throw CoreError(
                .invalidArgument, "run \(runID) is the \(run.request.kind.rawValue) task '\(run.request.identifier)': only a continued-processing task reports progress",
                fix: "report progress from a ContinuedProcessingTask")
        }
        progress.completed = completed
        progress.total = total
        progress.title = title ?? progress.title
        progress.subtitle = subtitle ?? progress.subtitle
        progress.reportedAt = now
        run.progress = progress
        if !run.expirationSent { run.expiresAt = now + .seconds(double: configuration.continuedProcessing.progressTimeout) }
        apps[id]?.process?.runs[index] = run
        deadlinesStale.insert(id)
        showContinued(id, run)
        return finish(now)
    }

    /// The user cancels a continued-processing task (`offstage cancel-task`): a running one has its expiration
    /// handler called, a queued one is dropped. Returns what happened, for the CLI.
    public mutating func cancelContinuedTask(_ id: AppID, identifier: String, at now: Instant) throws(CoreError) -> (String, [CoreAction]) {
        try validateIdentifier(identifier)
        let entry = try entry(id)
        if let run = entry.process?.runs.first(where: { $0.request.identifier == identifier }) {
            guard run.request.kind == .continued else { throw notContinued(identifier, run.request.kind) }
            guard !run.expirationSent else {
                return ("'\(identifier)' is already ending (\(run.endedBecause ?? "its expiration handler was called"))", finish(now))
            }
            endContinued(id, run, because: "cancelled by the user", cause: .cancelled, now)
            return ("cancelled '\(identifier)' at \(run.progress?.description ?? "0 of ?"): the app's expiration handler was called", finish(now))
        }
        if let request = entry.durable.schedule.requests[identifier] {
            guard request.kind == .continued else { throw notContinued(identifier, request.kind) }
            apps[id]?.durable.schedule.requests[identifier] = nil
            emit(.saveApp(id))
            log(now, id, .schedule, "queued continued-processing request '\(identifier)' cancelled by the user")
            scheduleAgain(id)
            return ("cancelled queued '\(identifier)' before it started", finish(now))
        }
        throw CoreError(
            .noSuchTask, "'\(id)' has no continued-processing task '\(identifier)' queued or running",
            fix: "`offstage tasks \(id)` lists its tasks")
    }

    /// Force-quit drops the app's queued continued-processing requests (SPEC SCH-11); its running ones end with it.
    mutating func dropQueuedContinued(_ id: AppID, _ now: Instant) {
        guard let requests = apps[id]?.durable.schedule.requests else { return }
        let queued = requests.values.filter { $0.kind == .continued }.map(\.identifier).sorted()
        guard !queued.isEmpty else { return }
        for identifier in queued { apps[id]?.durable.schedule.requests[identifier] = nil }
        emit(.saveApp(id))
        log(now, id, .schedule, "dropped \(queued.count) queued continued-processing request(s) (\(queued.joined(separator: ", "))): the user force-quit the app")
    }

    /// Whether anything the core decides now depends on memory pressure or the thermal state (SPEC SCH-11, MEM-1):
    /// continued-processing work queued or running, or memory short (the response waits for it to be relieved). The shell reads them from the machine at an interval only then,
    /// so that an idle device is not woken to read them (§11: an idle daemon makes no periodic wake-ups).
    public var dependsOnDevicePressure: Bool { !continuedApps.isEmpty || memory.episode != nil }

    /// Ends the tasks pressure does not leave room for, then starts queued requests in the order they were submitted
    /// while slots are free. Runs with every scheduler pass; it looks only at apps with continued work.
    mutating func settleContinued(_ conditions: DeviceConditions, _ now: Instant) {
        guard !continuedApps.isEmpty else { return }
        let policy = continuedPolicy
        let pressure = policy.pressure(conditions)
        var running = continuedRunning()
        if let pressure {
            let ending = policy.toEnd(running, slots: policy.slots(underPressure: true))
            let live = running.filter { !$0.ending }.count
            for victim in ending {
                guard let run = apps[victim.app]?.process?.runs.first(where: { $0.id == victim.run }) else { continue }
                endContinued(
                    victim.app, run,
                    because: "ended under pressure (\(pressure)): it reported the least progress (\(victim.progress.description)) of the \(live) running",
                    cause: .pressure, now)
            }
            if !ending.isEmpty { running = continuedRunning() }
        }
        // After a daemon restart the apps found alive report the tasks they still run as they reattach: until every one
        // has, the slots taken are unknown, and a queued request started now could overfill them (or go to a process
        // that is still to say what it runs). Each reattach runs the scheduler again (`adoptContinued`).
        if apps.values.contains(where: { $0.process?.reattachDeadline != nil }) { return }
        var free = policy.free(running: running.count, underPressure: pressure != nil)
        guard free > 0 else { return }
        for (id, request) in continuedQueue() {
            guard free > 0 else { break }
            guard let entry = apps[id], continuedStartHold(entry, now) == nil else { continue }
            startRun(id, request, forced: false, now, why: "a slot is free")
            free -= 1
        }
    }

    /// Calls a running task's expiration handler, recording why it ends.
    mutating func endContinued(_ id: AppID, _ run: TaskRun, because reason: String, cause: RunExpiry, _ now: Instant) {
        guard let index = apps[id]?.process?.runs.firstIndex(where: { $0.id == run.id }) else { return }
        apps[id]?.process?.runs[index].endedBecause = reason
        expireRun(id, run: run.id, because: reason, cause: cause, now)
        if let ending = apps[id]?.process?.runs[index] { showContinued(id, ending) }
    }

    /// Every running continued-processing task.
    func continuedRunning() -> [ContinuedProcessingPolicy.Running] {
        continuedApps.sorted().flatMap { id in
            (apps[id]?.process?.runs ?? []).compactMap { run in
                run.progress.map {
                    .init(app: id, run: run.id, progress: $0, startedAt: run.startedAt, ending: run.expirationSent)
                }
            }
        }
    }

    /// Queued requests of every app, in the order they were submitted; forgets apps with no continued work left.
    mutating func continuedQueue() -> [(AppID, TaskRequest)] {
        var queue: [(AppID, TaskRequest)] = []
        for id in continuedApps.sorted() {
            guard let entry = apps[id] else {
                continuedApps.remove(id)
                continue
            }
            let queued = entry.durable.schedule.requests.values.filter { $0.kind == .continued }
            let running = entry.process?.runs.contains { $0.progress != nil } ?? false
            if queued.isEmpty && !running { continuedApps.remove(id) }
            queue += queued.map { (id, $0) }
        }
        return queue.sorted {
            if $0.1.submittedAt != $1.1.submittedAt { return $0.1.submittedAt < $1.1.submittedAt }
            return ($0.0, $0.1.identifier) < ($1.0, $1.1.identifier)
        }
    }

    /// Free slots now, and the tasks taking the others.
    func continuedSlotsFree(_ now: Instant) -> (Int, [ContinuedProcessingPolicy.Running]) {
        let policy = continuedPolicy
        let running = continuedRunning()
        let underPressure = policy.pressure(conditions(at: now)) != nil
        let queuedAhead = continuedApps.reduce(0) { count, id in
            count + (apps[id]?.durable.schedule.requests.values.filter { $0.kind == .continued }.count ?? 0)
        }
        return (max(0, policy.free(running: running.count, underPressure: underPressure) - queuedAhead), running)
    }

    /// Why a queued request of this app cannot start now, or nil when it can.
    func continuedStartHold(_ entry: AppEntry, _ now: Instant) -> String? { continuedStartBlock(entry, now)?.text }

    /// Why a queued request of this app cannot start now, as the history names it and for people; nil when it can.
    func continuedStartBlock(_ entry: AppEntry, _ now: Instant) -> (reason: WaitReason, text: String)? {
        if let text = continuedUnavailability(entry) {
            let reason: WaitReason =
                !device.settings.multitaskingSupported
                ? .multitaskingOff : entry.app.manifest.exitsOnSuspend ? .exitsOnSuspend : .backgroundActivityOff
            return (reason, text)
        }
        if entry.durable.forceQuit { return (.forceQuit, "the user force-quit the app") }
        if entry.uninstalling { return (.terminating, "the app is being uninstalled") }
        if entry.process?.termination != nil { return (.terminating, "the app is being terminated") }
        if let until = entry.durable.crashLoop.notBefore, until > now {
            return (.crashLoop, "the app crashed repeatedly; not before \(until.clockTime)")
        }
        return nil
    }

    /// Why the app may not continue work in the background at all.
    func continuedUnavailability(_ entry: AppEntry) -> String? {
        if !device.settings.multitaskingSupported { return "multitasking is off: no app runs in the background" }
        if entry.app.manifest.exitsOnSuspend { return "the app exits on suspend (UIApplicationExitsOnSuspend)" }
        if !entry.app.settings.backgroundActivity { return "background activity is off for this app" }
        return nil
    }

    func validateContinuedText(_ text: String, _ field: String, required: Bool) throws(CoreError) {
        let blank = text.allSatisfy { $0.isWhitespace }
        guard !(required && blank), text.utf8.count <= 256,
            !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw CoreError(
                .invalidArgument,
                "\(field) \(QuotedText.quote(text)) is \(required && blank ? "empty" : "longer than 256 bytes or holds control characters")",
                fix: "give a \(field) of one line the user can read, e.g. \"Exporting 120 photos\"")
        }
    }

    func notContinued(_ identifier: String, _ kind: TaskKind) -> CoreError {
        CoreError(
            .invalidArgument, "'\(identifier)' is a \(kind.rawValue) task: the user cancels only continued-processing tasks",
            fix: "`offstage expire-task` calls the expiration handler of any running task, for testing")
    }
}

extension OffstageCore {
    /// Why a queued continued-processing request has not started, for `offstage tasks` and `explain`.
    func continuedQueueSummary(_ entry: AppEntry, _ now: Instant) -> String {
        if let hold = continuedStartHold(entry, now) { return "queued; cannot start: \(hold)" }
        let policy = continuedPolicy
        let pressure = policy.pressure(conditions(at: now))
        let slots = policy.slots(underPressure: pressure != nil)
        let running = continuedRunning().count
        return "queued for a continued-processing slot: \(running) of \(slots) taken"
            + (pressure.map { " (\($0): \(slots) under pressure)" } ?? "")
    }
}

extension OffstageCore {
    /// The app's continued-processing tasks as the user sees them: running ones, then queued ones in order.
    func continuedTasks(of entry: AppEntry) -> [ContinuedTaskView] {
        let running = (entry.process?.runs ?? []).compactMap { run in
            run.progress.map {
                ContinuedTaskView(
                    identifier: run.request.identifier, state: run.expirationSent ? .ending : .running, title: $0.title,
                    subtitle: $0.subtitle, completed: $0.completed, total: $0.total, endedBecause: run.endedBecause)
            }
        }
        let queued = entry.durable.schedule.requests.values.filter { $0.kind == .continued }
            .sorted { ($0.submittedAt, $0.identifier) < ($1.submittedAt, $1.identifier) }
            .map {
                ContinuedTaskView(
                    identifier: $0.identifier, state: .queued, title: $0.continued?.title ?? $0.identifier,
                    subtitle: $0.continued?.subtitle ?? "", completed: 0, total: 0)
            }
        return running + queued
    }
}

extension OffstageCore {
    /// The runs of the continued-processing tasks an app reports after a daemon restart: the user's work goes on, with
    /// the progress the app reports, under the same run numbers (SPEC SCH-11, LC-8). Tasks that do not fit the
    /// app's manifest any more are not taken up; the app hears nothing of them and they end with it.
    mutating func adoptContinued(_ id: AppID, _ reported: [AttachReport.ReportedContinuedTask], _ now: Instant) -> [TaskRun] {
        // Queued requests wait while apps found alive are still to reattach (`settleContinued`): this one may be the last.
        if !continuedApps.isEmpty { schedulerDirty = true }
        guard let entry = apps[id], !reported.isEmpty else { return [] }
        var runs: [TaskRun] = []
        for task in reported where entry.app.manifest.permits(task.identifier, .continued) && task.run > 0 {
            guard !runs.contains(where: { $0.id == task.run || $0.request.identifier == task.identifier }) else { continue }
            var progress = task.progress
            progress.reportedAt = now
            let request = TaskRequest(
                identifier: task.identifier, kind: .continued, submittedAt: now,
                continued: ContinuedTaskDetails(title: progress.title, subtitle: progress.subtitle))
            var run = TaskRun(
                id: task.run, request: request, startedAt: now,
                expiresAt: now + .seconds(double: configuration.continuedProcessing.progressTimeout), forced: false,
                onBattery: !conditions(at: now).charging, progress: progress)
            run.start = .adopted
            runs.append(run)
            nextNumber = max(nextNumber, task.run + 1)
            log(now, id, .taskRun, "continued-processing task '\(task.identifier)' (\(QuotedText.quote(progress.title))) taken up again after a daemon restart at \(progress.description)")
            // The start is handed to the app before the store has written that the request left the queue: a kill in
            // between leaves it queued. The app running it is the truth; starting it again would run the user's work twice.
            if apps[id]?.durable.schedule.requests[task.identifier]?.kind == .continued {
                apps[id]?.durable.schedule.requests[task.identifier] = nil
                emit(.saveApp(id))
                log(now, id, .schedule, "queued continued-processing request '\(task.identifier)' left the queue: the app reports it running (its start was not written before the daemon stopped)")
            }
        }
        if !runs.isEmpty { continuedApps.insert(id) }
        for run in runs {
            recordRunStarted(id, run, now)
            showContinued(id, run)
        }
        return runs
    }
}

extension OffstageCore {
    /// Tells the shell what the user should see of a continued-processing run now.
    mutating func showContinued(_ id: AppID, _ run: TaskRun) {
        guard let progress = run.progress else { return }
        let view = ContinuedTaskView(
            identifier: run.request.identifier, state: run.expirationSent ? .ending : .running, title: progress.title,
            subtitle: progress.subtitle, completed: progress.completed, total: progress.total,
            endedBecause: run.endedBecause)
        emit(.continuedProgress(id, run: run.id, view))
    }
}
