import OffstageCore

extension ModelShell {
    /// The identifier of the slot's continued-processing task `index`; the `downloader` manifest permits them by
    /// pattern.
    static func continuedIdentifier(_ index: Int) -> String { "com.example.model.export.\(index)" }

    /// The identifier of the slot's background session `index`.
    static func sessionIdentifier(_ index: Int) -> String { "s\(index)" }

    /// Carries out one transfer or continued-processing command: the app's calls, the engine's reports, the user's
    /// cancel (SPEC TR-1..6, SCH-11).
    mutating func applyTransfer(_ command: ModelCommand, slot: Int) {
        let id = ModelWorld.app(slot)
        switch command {
        case .openTransferSession(_, let session, let discretionary):
            guard let process = running(slot) else { return }
            let configuration = TransferSessionConfiguration(discretionary: discretionary)
            feed { core, now throws(CoreError) in
                try core.openTransferSession(
                    id, pid: process.pid, identifier: Self.sessionIdentifier(session), configuration: configuration, at: now)
            }
        case .createTransfer(_, let session, let file, let discretionary):
            guard let process = running(slot) else { return }
            let request = TransferRequest(
                kind: .download, url: ModelTransfers.url(file), discretionary: discretionary, filename: "")
            feed { core, now throws(CoreError) in
                try core.createTransfer(id, pid: process.pid, session: Self.sessionIdentifier(session), request: request, at: now).actions
            }
        case .transferProgress(let index):
            guard let attempt = engineAttempt(index), let task = core.transfers.tasks[attempt.task] else { return }
            let size = ModelTransfers.sizes[Self.fileIndex(task.request.url)]
            let step: Int64 = 1_048_576 * Int64(1 + index % 4)
            let done = size.map { min($0, task.bytesDone + step) } ?? task.bytesDone + step
            let validator = TransferValidator(etag: "\"v1\"", lastModified: nil)
            feed { core, now throws(CoreError) in
                core.transferProgress(attempt.task, attempt: attempt.attempt, bytesDone: done, bytesExpected: size, validator: validator, at: now)
            }
        case .endAttempt(let index, let end):
            guard let attempt = engineAttempt(index) else { return }
            transfersModel.attempts.removeAll { $0 == attempt }
            feed { core, now throws(CoreError) in core.transferEnded(attempt.task, attempt: attempt.attempt, end.result, at: now) }
        case .handleTransferEvents(_, let session):
            handleTransferEvents(slot, session: Self.sessionIdentifier(session))
        case .completeTransferEvents(_, let index):
            guard let process = running(slot) else { return }
            var run: UInt64 = 999_999  // never handed out: completing it must be harmless
            if !process.transferRuns.isEmpty {
                run = processes[process.pid]!.transferRuns.remove(at: index % process.transferRuns.count)
            }
            feed { core, now throws(CoreError) in try core.completeTransferEvents(id, pid: process.pid, run: run, at: now) }
        case .changeTransfer(_, let index, let change, let byUser):
            let tasks = core.transfers.tasks(of: id).sorted { $0.id < $1.id }
            let task = tasks.isEmpty ? 999_999 : tasks[index % tasks.count].id
            feed { core, now throws(CoreError) in try core.changeTransfer(task, change, app: byUser ? nil : id, at: now) }
        case .submitContinued(_, let index, let queue):
            guard let process = running(slot) else { return }
            let inFront = core.device.foregroundApp == id && core.apps[id]?.process?.phase.isForeground == true
            let request = TaskRequest(
                identifier: Self.continuedIdentifier(index), kind: .continued, submittedAt: now,
                continued: ContinuedTaskDetails(title: "Export \(index)", strategy: queue ? .queue : .fail))
            if feed({ core, now throws(CoreError) in try core.submitTask(id, pid: process.pid, request: request, at: now) }),
                !inFront
            {
                record(.continuedSlots, "\(id) submitted continued task \(index) from the background and the core took it")
            }
        case .reportContinued(_, let index, let percent):
            guard let process = running(slot) else { return }
            let continued = (core.apps[id]?.process?.runs ?? []).filter { $0.progress != nil && process.runs.contains($0.id) }
            let run = continued.isEmpty ? 999_999 : continued[index % continued.count].id
            feed { core, now throws(CoreError) in
                try core.reportTaskProgress(id, pid: process.pid, run: run, completed: Int64(percent), total: 100, title: nil, subtitle: nil, at: now)
            }
        case .cancelContinued(_, let index):
            feed { core, now throws(CoreError) in
                try core.cancelContinuedTask(id, identifier: Self.continuedIdentifier(index), at: now).1
            }
        default:
            break
        }
    }

    /// The engine's attempt at this position, oldest first, among those not being stopped.
    func engineAttempt(_ index: Int) -> ModelAttempt? {
        let live = transfersModel.attempts.filter { !$0.stopping }
        return live.isEmpty ? nil : live[index % live.count]
    }

    static func fileIndex(_ url: String) -> Int {
        Int(url.dropFirst("https://files.example.com/model".count).prefix { $0.isNumber }) ?? 0
    }

    /// The app recreates its session by identifier (opening it again), fetches its tasks, and its delegate handles
    /// every finished one, which it then acknowledges: what the SDK does when the app is woken for the session's
    /// events or opens it again (SPEC TR-3).
    private mutating func handleTransferEvents(_ slot: Int, session: String) {
        guard let process = running(slot) else { return }
        let id = process.app
        let key = TransferSessionKey(app: id, identifier: session)
        let configuration = core.transfers.sessions[key]?.configuration ?? .init()
        guard feed({ core, now throws(CoreError) in
            try core.openTransferSession(id, pid: process.pid, identifier: session, configuration: configuration, at: now)
        })
        else { return }
        var finished: [UInt64] = []
        feed { core, now throws(CoreError) in
            let (tasks, actions) = try core.fetchTransferEvents(id, pid: process.pid, session: session, at: now)
            finished = tasks.filter(\.state.isFinished).map(\.id)
            return actions
        }
        guard !finished.isEmpty else { return }
        for task in finished where transfersModel.acknowledged.contains(task) {
            record(.transferEventsByTheRules, "\(id) was handed the event of transfer \(task) a second time")
        }
        transfersModel.acknowledged.formUnion(finished)
        feed { core, now throws(CoreError) in
            try core.acknowledgeTransfers(id, pid: process.pid, session: session, ids: finished, at: now)
        }
    }

    /// Once an input is handled: the engine reports the attempts the core asked it to stop as cancelled, as the
    /// daemon's runner does.
    mutating func settleEngine() {
        while violation == nil, let stopped = transfersModel.attempts.first(where: \.stopping) {
            transfersModel.attempts.removeAll { $0 == stopped }
            feed { core, now throws(CoreError) in core.transferEnded(stopped.task, attempt: stopped.attempt, .cancelled, at: now) }
        }
    }

    /// Checks one transfer action against the records, then records it.
    mutating func performTransfer(_ action: TransferAction) {
        for message in transfersModel.apply(action) { record(.transfersJournaled, message) }
    }

    /// A launch for transfer events follows the rules: an installed app the user has not force-quit, whose launches
    /// for its transfers since the user last opened it are spaced by the doubling delay (SPEC TR-3, LC-6).
    mutating func checkTransferLaunch(_ id: AppID) {
        guard let entry = core.apps[id] else {
            record(.transferEventsByTheRules, "\(id) was launched for transfer events though not installed")
            return
        }
        if entry.durable.forceQuit {
            record(.transferEventsByTheRules, "\(id) was launched for transfer events after the user force-quit it")
        }
        let earlier = transfersModel.launches[id] ?? []
        if let last = earlier.last {
            let limits = core.transferLimits
            let wait = min(limits.relaunchDelay * Double(1 << min(earlier.count - 1, 30)), limits.maximumRelaunchDelay)
            if (now - last).inSeconds < wait - 1e-9 {
                record(
                    .transferEventsByTheRules,
                    "\(id) was launched for transfer events \(formatSeconds((now - last).inSeconds)) s after the last such launch "
                        + "(launch \(earlier.count + 1) since the user opened it; the wait is \(formatSeconds(wait)) s)")
            }
        }
        transfersModel.launches[id, default: []].append(now)
    }

    /// After an input: checks the transfers and continued tasks, and notes the tasks the core has now.
    mutating func checkTransfers(continuedBefore: [UInt64: ContinuedSnapshot]) {
        for (invariant, message) in TransferInvariants.check(core, transfersModel, now: now) { record(invariant, message) }
        for task in core.transfers.tasks.values { transfersModel.known[task.id] = task.app }
        checkContinuedEndings(continuedBefore)
    }

    /// What the continued-processing runs were before an input: their progress, and whether they were ending.
    func continuedSnapshot() -> [UInt64: ContinuedSnapshot] {
        var snapshot: [UInt64: ContinuedSnapshot] = [:]
        for (id, entry) in core.apps {
            for run in entry.process?.runs ?? [] {
                guard let progress = run.progress else { continue }
                snapshot[run.id] = ContinuedSnapshot(
                    app: id, fraction: progress.fraction, ending: run.expirationSent, submittedAt: run.request.submittedAt)
            }
        }
        return snapshot
    }

    /// SCH-11: a task ended under pressure reported no more progress than any task left running; a queued task that
    /// started took its turn in submission order.
    private mutating func checkContinuedEndings(_ before: [UInt64: ContinuedSnapshot]) {
        let after = continuedSnapshot()
        let runs = core.apps.values.flatMap { $0.process?.runs ?? [] }
        for run in runs where run.expirationSent && before[run.id]?.ending == false {
            guard let reason = run.endedBecause, reason.contains("pressure"), let ended = after[run.id] else { continue }
            for (other, state) in after where other != run.id && !state.ending && state.fraction < ended.fraction {
                record(
                    .continuedSlots,
                    "run \(run.id) of \(ended.app) was ended under pressure at \(ended.fraction) while run \(other) of "
                        + "\(state.app) goes on at \(state.fraction)")
            }
        }
        // A run that started in this input from the queue: no request submitted before it waits in an app that could
        // have started it.
        for (run, state) in after where before[run] == nil && state.submittedAt < now {
            for (id, entry) in core.apps.sorted(by: { $0.key < $1.key }) where continuedCouldStart(entry) {
                for request in entry.durable.schedule.requests.values where request.kind == .continued && request.submittedAt < state.submittedAt {
                    record(
                        .continuedSlots,
                        "run \(run) of \(state.app) started from the queue before '\(request.identifier)' of \(id), submitted earlier")
                }
            }
        }
    }

    /// Whether an app's queued continued requests may start now, by the rules a user can read in SPEC SCH-11 and
    /// LC-6, LC-7, LC-9, SET-2.
    private func continuedCouldStart(_ entry: AppEntry) -> Bool {
        core.device.settings.multitaskingSupported && !entry.app.manifest.exitsOnSuspend && entry.app.settings.backgroundActivity
            && !entry.durable.forceQuit && !entry.uninstalling && entry.process?.termination == nil
            && (entry.durable.crashLoop.notBefore.map { $0 <= now } ?? true)
    }

    /// The daemon's start, for transfers: the journal is read back into the new core (running tasks resume from their
    /// checkpoints, SPEC TR-6); the engine starts empty.
    func restoredTransfers(into core: inout OffstageCore) -> [CoreAction] {
        core.restoreTransfers(
            tasks: transfersModel.rows.values.sorted { $0.id < $1.id },
            sessions: transfersModel.sessions.values.sorted { $0.key < $1.key }, relaunches: transfersModel.relaunches)
    }
}

/// A continued-processing run as it was before an input.
struct ContinuedSnapshot: Hashable, Sendable {
    /// Its app.
    var app: AppID
    /// The fraction of its work it reported done.
    var fraction: Double
    /// Its expiration handler was called.
    var ending: Bool
    /// When its request was submitted.
    var submittedAt: Instant
}
