import OffstageCore

/// How the model's engine ends an attempt, written so a reproduction reads as Swift source.
enum ModelAttemptEnd: String, CaseIterable, Hashable, Sendable {
    /// The file is complete (200).
    case completed
    /// A connection reset: retried after the back-off.
    case transient
    /// 503 with `Retry-After: 120`.
    case retryAfter
    /// 404: the task fails.
    case permanent
    /// The disk is full: retried like a transient failure.
    case diskFull
    /// The engine stopped it by itself (the daemon stopping).
    case cancelled

    /// What the engine reports to the core.
    var result: TransferAttemptResult {
        switch self {
        case .completed: .completed(status: 200)
        case .transient: .transient("connection reset (model)", retryAfter: nil)
        case .retryAfter: .transient("HTTP 503 (model)", retryAfter: 120)
        case .permanent: .permanent(status: 404, "HTTP 404 (model)")
        case .diskFull: .file("no space left on device (model)")
        case .cancelled: .cancelled
        }
    }
}

/// One attempt the model's engine runs.
struct ModelAttempt: Hashable, Sendable {
    /// The task.
    var task: UInt64
    /// Its attempt number.
    var attempt: UInt64
    /// The core asked to stop it: the engine reports it cancelled once the input is handled.
    var stopping = false
}

/// The transfers as the daemon's shell would have them (SPEC TR-1..6): the journal built from the transfer actions
/// alone, the attempts the engine runs, and what the apps were handed. The invariants compare it with the core.
struct ModelTransfers: Hashable, Sendable {
    /// The journal's task rows.
    var rows: [UInt64: TransferTask] = [:]
    /// The journal's session rows.
    var sessions: [TransferSessionKey: TransferSession] = [:]
    /// The journal's relaunch records (an empty record is none).
    var relaunches: [AppID: TransferRelaunches] = [:]
    /// Attempts the engine runs, oldest first.
    var attempts: [ModelAttempt] = []
    /// Downloads whose file was handed over to their app.
    var handedOver: Set<UInt64> = []
    /// Finished tasks whose events the app handled (acknowledged): they must never come back.
    var acknowledged: Set<UInt64> = []
    /// Every task the core has had, with its app, to notice one that disappears without being acknowledged.
    var known: [UInt64: AppID] = [:]
    /// Launches for transfer events since the user last opened each app (SPEC TR-3 relaunch back-off).
    var launches: [AppID: [Instant]] = [:]

    /// The file sizes the model's server has: three known, one sent without a length.
    static let sizes: [Int64?] = [3_000_000, 20_000_000, 64_000_000, nil]

    /// The URL of file `index`.
    static func url(_ index: Int) -> String { "https://files.example.com/model\(index % sizes.count).bin" }

    /// Carries out one transfer action as the daemon's store and engine would; returns what it broke (SPEC TR-6: the
    /// journal write comes before the action it makes safe).
    mutating func apply(_ action: TransferAction) -> [String] {
        var broken: [String] = []
        switch action {
        case .save(let task):
            rows[task.id] = task
        case .delete(let task):
            rows[task.id] = nil
            if attempts.contains(where: { $0.task == task.id && !$0.stopping }) {
                broken.append("transfer \(task.id) was deleted while its attempt runs and nothing stopped it")
            }
        case .saveSession(let session):
            sessions[session.key] = session
        case .deleteSession(let key):
            sessions[key] = nil
        case .saveRelaunches(let app, let record):
            relaunches[app] = record.count == 0 ? nil : record
        case .start(let task):
            guard let row = rows[task.id], row.state == .running, row.attempt == task.attempt else {
                broken.append(
                    "transfer \(task.id) attempt \(task.attempt) started, but the journal has it "
                        + "\(rows[task.id].map { "\($0.state.rawValue), attempt \($0.attempt)" } ?? "not at all")")
                break
            }
            if let other = attempts.first(where: { $0.task == task.id && !$0.stopping }) {
                broken.append("transfer \(task.id) attempt \(task.attempt) started while attempt \(other.attempt) runs")
            }
            attempts.append(ModelAttempt(task: task.id, attempt: task.attempt))
        case .stop(let id, let attempt):
            for index in attempts.indices where attempts[index].task == id && attempts[index].attempt == attempt {
                attempts[index].stopping = true
            }
        case .handOver(let task):
            if rows[task.id]?.state != .completed {
                broken.append("transfer \(task.id)'s file was handed over before the journal had it completed")
            }
            if !handedOver.insert(task.id).inserted {
                broken.append("transfer \(task.id)'s file was handed over twice")
            }
        }
        return broken
    }

    /// The daemon died: its attempts died with it.
    mutating func engineStopped() { attempts = [] }
}

/// The invariants of background transfers and continued processing (SPEC TR-1..6, SCH-11), read from the core and the
/// model's own records after every input.
enum TransferInvariants {
    /// Checks the transfer queue against the journal, the engine and the limits; the tasks the apps were handed; and
    /// the continued-processing slots.
    static func check(_ core: OffstageCore, _ model: ModelTransfers, now: Instant) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        func fail(_ invariant: Invariant, _ message: String) { found.append((invariant, message)) }
        let queue = core.transfers

        // TR-6: the journal says what the core has, so a restart loses nothing and brings nothing back.
        for id in Set(queue.tasks.keys).union(model.rows.keys).sorted() where queue.tasks[id] != model.rows[id] {
            fail(
                .transfersJournaled,
                "transfer \(id): the core has \(describe(queue.tasks[id])), the journal \(describe(model.rows[id]))")
        }
        for key in Set(queue.sessions.keys).union(model.sessions.keys).sorted()
        where queue.sessions[key] != model.sessions[key] {
            fail(.transfersJournaled, "session \(key): the core and the journal differ")
        }
        let relaunches = queue.relaunches.filter { $0.value.count > 0 }
        if relaunches != model.relaunches {
            fail(.transfersJournaled, "relaunch records: the core has \(relaunches), the journal \(model.relaunches)")
        }

        // TR-4, TR-5, SET-2: what runs fits the limits, is free to run, and is what the engine runs.
        let running = queue.tasks.values.filter { $0.state == .running }.sorted { $0.id < $1.id }
        let limits = core.transferLimits
        if running.count > limits.maximumRunning {
            fail(.transfersWithinLimits, "\(running.count) transfers run, more than \(limits.maximumRunning)")
        }
        for (app, tasks) in Dictionary(grouping: running, by: \.app) where tasks.count > limits.maximumRunningPerApp {
            fail(.transfersWithinLimits, "\(app) has \(tasks.count) transfers running, more than \(limits.maximumRunningPerApp)")
        }
        let conditions = core.conditions(at: now)
        for task in running {
            let holds = holds(task, core, conditions, now)
            if !holds.isEmpty {
                fail(.transfersWithinLimits, "transfer \(task.id) of \(task.app) runs though \(holds.joined(separator: ", "))")
            }
            if core.apps[task.app]?.durable.forceQuit == true {
                fail(.transfersWithinLimits, "transfer \(task.id) runs though the user force-quit \(task.app) (TR-2)")
            }
            if !model.attempts.contains(where: { $0.task == task.id && $0.attempt == task.attempt && !$0.stopping }) {
                fail(.transfersWithinLimits, "transfer \(task.id) is running in the core, but the engine runs no attempt \(task.attempt)")
            }
        }
        for attempt in model.attempts where !attempt.stopping {
            guard let task = queue.tasks[attempt.task], task.state == .running, task.attempt == attempt.attempt else {
                fail(.transfersWithinLimits, "the engine runs attempt \(attempt.attempt) of transfer \(attempt.task), which the core does not")
                continue
            }
        }
        for task in queue.tasks.values.sorted(by: { $0.id < $1.id }) {
            if task.bytesDone < 0 || (task.bytesExpected.map { task.bytesDone > $0 } ?? false) {
                fail(.transfersWithinLimits, "transfer \(task.id) has \(task.bytesDone) of \(task.bytesExpected.map(String.init) ?? "?") bytes")
            }
        }

        // TR-2, TR-3: every finished task waits for its app; one the app handled never comes back; a force-quit app
        // has nothing unfinished.
        for (id, app) in model.known.sorted(by: { $0.key < $1.key }) where queue.tasks[id] == nil {
            if !model.acknowledged.contains(id), core.apps[app] != nil, core.apps[app]?.uninstalling != true {
                fail(.transferEventsByTheRules, "transfer \(id) of \(app) is gone, though its app never handled its event")
            }
        }
        for id in model.acknowledged.sorted() where queue.tasks[id] != nil {
            fail(.transferEventsByTheRules, "transfer \(id) is back after its app handled its event")
        }
        for (id, entry) in core.apps.sorted(by: { $0.key < $1.key }) where entry.durable.forceQuit {
            for task in queue.tasks(of: id) where !task.state.isFinished {
                fail(.transferEventsByTheRules, "transfer \(task.id) is \(task.state.rawValue) though the user force-quit \(id) (TR-2)")
            }
        }

        // SCH-11: the continued-processing slots.
        // Pressure and slots from the settings themselves, not the core's policy: low power mode, or the battery at or
        // under its level off power.
        let continued = core.configuration.continuedProcessing
        let pressure: String? =
            conditions.lowPowerMode
            ? "low power mode"
            : !conditions.charging && conditions.batteryLevel <= continued.pressureBatteryLevel ? "low battery" : nil
        let live = core.apps.sorted { $0.key < $1.key }.flatMap { id, entry in
            (entry.process?.runs ?? []).filter { $0.progress != nil && !$0.expirationSent }.map { (id, $0) }
        }
        let slots = pressure == nil ? continued.slots : continued.slotsUnderPressure
        if live.count > slots {
            fail(
                .continuedSlots,
                "\(live.count) continued-processing tasks run, more than the \(slots) slots\(pressure.map { " (\($0))" } ?? "")")
        }
        let timeout = continued.progressTimeout
        for (id, run) in live {
            guard let progress = run.progress, now >= progress.reportedAt + .seconds(double: timeout) else { continue }
            fail(
                .continuedSlots,
                "\(id)'s continued task '\(run.request.identifier)' reported nothing for \(formatSeconds((now - progress.reportedAt).inSeconds)) s and still runs")
        }
        return found
    }

    /// What holds a task back by the rules of SPEC TR-4, TR-5 and SET-2, written out here rather than asked of the
    /// core: no network; a metered one the session does not allow, or, in the background, one the app's background
    /// data or data saver forbids; in the background, background activity off, or a discretionary task off power, on
    /// a metered network or in low power mode; its earliest begin date or retry time still ahead.
    static func holds(_ task: TransferTask, _ core: OffstageCore, _ conditions: DeviceConditions, _ now: Instant) -> [String] {
        guard let entry = core.apps[task.app] else { return ["its app is not installed"] }
        let session = core.transfers.sessions[TransferSessionKey(app: task.app, identifier: task.session)]?.configuration ?? .init()
        let inFront = entry.process?.phase.isForeground == true
        let settings = entry.app.settings
        var holds: [String] = []
        if conditions.network == .none { holds.append("no network") }
        if conditions.network == .metered {
            if !session.allowsMeteredNetwork { holds.append("a metered network its session does not allow") }
            if !inFront && !settings.backgroundData { holds.append("a metered network with background data off") }
            if !inFront && core.device.settings.dataSaver && !settings.unrestrictedData { holds.append("data saver") }
        }
        if !inFront && !settings.backgroundActivity { holds.append("background activity off") }
        if !inFront && (task.request.discretionary || session.discretionary) {
            if !conditions.charging { holds.append("discretionary, not charging") }
            if conditions.lowPowerMode { holds.append("discretionary, low power mode") }
            if conditions.network == .metered { holds.append("discretionary, metered network") }
        }
        if let earliest = task.request.earliestBegin, earliest > now { holds.append("its earliest begin date ahead") }
        if let retry = task.retryAt, retry > now { holds.append("its retry time ahead") }
        return holds
    }

    private static func describe(_ task: TransferTask?) -> String {
        guard let task else { return "nothing" }
        return "\(task.state.rawValue), attempt \(task.attempt), \(task.bytesDone) bytes"
    }
}
