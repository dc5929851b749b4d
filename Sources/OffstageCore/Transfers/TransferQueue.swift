/// Background transfers (SPEC §5): every app's sessions and their tasks, and which of them run. The core asks it what
/// to start and stop whenever something they depend on changed; the shell moves the bytes and reports back.
///
/// It decides how many run at once (``TransferLimits``) and in which order: the foreground app's first, then a fair
/// share per app (the app with the fewest running goes next), oldest first within an app. A task that runs keeps its
/// place unless a task that comes first in that order needs the slot.
///
/// One method per input, returning the ``TransferAction``s to carry out; the core decides everything about the app
/// itself (holds from its settings, launching it for its events).
public struct TransferQueue: Hashable, Sendable {
    /// Every task not yet acknowledged by its app, by id. Changed only through ``put(_:)`` and ``drop(_:)``.
    public private(set) var tasks: [UInt64: TransferTask] = [:]
    /// The ids of the tasks waiting or running: what a decision looks at, without going through the finished tasks
    /// that wait for their app, or copying every task to sort them (SPEC §11: 1,000 queued transfers).
    private var runnable: Set<UInt64> = []
    /// Every session, by key.
    public private(set) var sessions: [TransferSessionKey: TransferSession] = [:]
    /// Launches for transfers since the user last opened each app.
    public private(set) var relaunches: [AppID: TransferRelaunches] = [:]
    /// Something what runs depends on changed: the core decides again at the end of the input.
    var dirty = false
    /// When a time-based hold lifts or a task times out, as of the last decision.
    public private(set) var nextLift: Instant?

    /// Nothing queued.
    public init() {}

    // MARK: Queries

    /// The app's tasks, oldest first.
    public func tasks(of app: AppID) -> [TransferTask] {
        tasks.values.filter { $0.app == app }.sorted { $0.id < $1.id }
    }

    /// The session's tasks, oldest first.
    public func tasks(in key: TransferSessionKey) -> [TransferTask] {
        tasks.values.filter { $0.app == key.app && $0.session == key.identifier }.sorted { $0.id < $1.id }
    }

    /// Unfinished tasks of the app.
    func unfinishedCount(of app: AppID) -> Int {
        tasks.values.reduce(0) { $0 + ($1.app == app && !$1.state.isFinished ? 1 : 0) }
    }

    /// Sessions whose tasks have all finished, with events the app has not heard of, that want the app launched.
    func sessionsWithEventsDue() -> [TransferSessionKey] {
        var unfinished: Set<TransferSessionKey> = []
        var finished: Set<TransferSessionKey> = []
        for task in tasks.values {
            let key = TransferSessionKey(app: task.app, identifier: task.session)
            if task.state.isFinished { finished.insert(key) } else { unfinished.insert(key) }
        }
        return finished.subtracting(unfinished).filter { key in
            guard let session = sessions[key] else { return false }
            return session.configuration.sendsLaunchEvents && !session.eventsSignalled
        }.sorted()
    }

    // MARK: Restoring

    /// Puts back what the store journaled. A task that was running when the daemon stopped waits again and resumes
    /// from its checkpoint (SPEC TR-6). Returns the rows to write again.
    mutating func restore(
        tasks restored: [TransferTask], sessions restoredSessions: [TransferSession], relaunches restoredRelaunches: [AppID: TransferRelaunches]
    ) -> [TransferAction] {
        var actions: [TransferAction] = []
        for session in restoredSessions { sessions[session.key] = session }
        relaunches.merge(restoredRelaunches) { $1 }
        for var task in restored {
            if task.state == .running {
                task.state = .waiting
                task.interrupted = true
                actions.append(.save(task))
            }
            put(task)
        }
        dirty = true
        return actions
    }

    // MARK: Inputs

    /// Opens (or reconfigures) a session.
    mutating func open(_ key: TransferSessionKey, _ configuration: TransferSessionConfiguration) -> [TransferAction] {
        var session = sessions[key] ?? TransferSession(key: key, configuration: configuration)
        guard sessions[key] == nil || session.configuration != configuration else { return [] }
        session.configuration = configuration
        sessions[key] = session
        dirty = true
        return [.saveSession(session)]
    }

    /// Adds a task created by its app.
    mutating func add(_ task: TransferTask) -> [TransferAction] {
        put(task)
        dirty = true
        return [.save(task)]
    }

    /// The app fetched the session's events: it may be woken for later ones.
    mutating func eventsFetched(_ key: TransferSessionKey) -> [TransferAction] {
        guard var session = sessions[key], session.eventsSignalled else { return [] }
        session.eventsSignalled = false
        sessions[key] = session
        return [.saveSession(session)]
    }

    /// The app is being woken for the session's events.
    mutating func eventsSignalled(_ key: TransferSessionKey) -> [TransferAction] {
        guard var session = sessions[key] else { return [] }
        session.eventsSignalled = true
        sessions[key] = session
        return [.saveSession(session)]
    }

    /// The app was launched for its transfers at `now`.
    mutating func relaunched(_ app: AppID, at now: Instant) -> [TransferAction] {
        var record = relaunches[app] ?? TransferRelaunches()
        record.count += 1
        record.lastAt = now
        relaunches[app] = record
        return [.saveRelaunches(app, record)]
    }

    /// The user opened the app: its next launch for transfers is not delayed.
    mutating func userOpened(_ app: AppID) -> [TransferAction] {
        guard let record = relaunches[app], record.count > 0 else { return [] }
        relaunches[app] = TransferRelaunches()
        return [.saveRelaunches(app, TransferRelaunches())]
    }

    /// The attempt moved bytes: the task's checkpoint, or where a restarted attempt begins again.
    mutating func progress(
        _ id: UInt64, attempt: UInt64, bytesDone: Int64, bytesExpected: Int64?, validator: TransferValidator?, at now: Instant
    ) -> [TransferAction] {
        guard var task = tasks[id], task.state == .running, task.attempt == attempt else { return [] }
        if bytesDone > task.bytesDone {
            task.progressAt = now
            task.attempts = 0
        }
        task.bytesDone = bytesDone
        if let bytesExpected { task.bytesExpected = bytesExpected }
        if let validator { task.validator = validator }
        put(task)
        return [.save(task)]
    }

    /// The attempt ended. Returns the actions and, when the task finished, the task.
    mutating func ended(
        _ id: UInt64, attempt: UInt64, _ result: TransferAttemptResult, at now: Instant, _ limits: TransferLimits
    ) -> (actions: [TransferAction], finished: TransferTask?) {
        guard var task = tasks[id], task.state == .running, task.attempt == attempt else { return ([], nil) }
        dirty = true
        task.interrupted = false
        switch result {
        case .completed(let status, let responseBody):
            task.state = .completed
            task.httpStatus = status
            task.responseBody = responseBody
            task.finishedAt = now
            task.retryAt = nil
            task.lastError = nil
            if let expected = task.bytesExpected { task.bytesDone = max(task.bytesDone, expected) }
            put(task)
            return (task.request.kind == .download ? [.save(task), .handOver(task)] : [.save(task)], task)
        case .permanent(let status, let message):
            let failure = TransferFailure(status == nil ? .badRequest : .httpStatus, status: status, message)
            return finish(&task, failure, now)
        case .transient(let message, let retryAfter):
            return (retryLater(&task, message, retryAfter: retryAfter, now, limits), nil)
        case .file(let message):
            return (retryLater(&task, message, retryAfter: nil, now, limits), nil)
        case .cancelled:
            task.state = .waiting
            put(task)
            return ([.save(task)], nil)
        }
    }

    /// A transient failure: the task waits, longer after each failure in a row.
    private mutating func retryLater(
        _ task: inout TransferTask, _ message: String, retryAfter: Double?, _ now: Instant, _ limits: TransferLimits
    ) -> [TransferAction] {
        task.attempts += 1
        task.state = .waiting
        task.lastError = message
        task.retryAt = now + .seconds(double: limits.retryWait(failures: task.attempts, serverAsked: retryAfter))
        put(task)
        return [.save(task)]
    }

    /// Ends the task with `failure`, stopping its attempt if one runs.
    mutating func fail(_ id: UInt64, _ failure: TransferFailure, at now: Instant) -> (actions: [TransferAction], finished: TransferTask?) {
        guard var task = tasks[id], !task.state.isFinished else { return ([], nil) }
        dirty = true
        return finish(&task, failure, now)
    }

    private mutating func finish(_ task: inout TransferTask, _ failure: TransferFailure, _ now: Instant) -> (actions: [TransferAction], finished: TransferTask?) {
        var actions: [TransferAction] = []
        if task.state == .running { actions.append(.stop(id: task.id, attempt: task.attempt)) }
        task.state = .failed
        task.failure = failure
        task.httpStatus = failure.status
        task.finishedAt = now
        task.retryAt = nil
        put(task)
        actions.append(.save(task))
        return (actions, task)
    }

    /// Pauses the task (from the app or by hand); a paused task runs only once resumed.
    mutating func pause(_ id: UInt64) -> [TransferAction] {
        guard var task = tasks[id], task.state == .waiting || task.state == .running else { return [] }
        var actions: [TransferAction] = []
        if task.state == .running { actions.append(.stop(id: id, attempt: task.attempt)) }
        task.state = .paused
        put(task)
        dirty = true
        actions.append(.save(task))
        return actions
    }

    /// Resumes a paused task; it waits for its conditions like a new one, without the wait of earlier failures.
    mutating func resume(_ id: UInt64) -> [TransferAction] {
        guard var task = tasks[id], task.state == .paused else { return [] }
        task.state = .waiting
        task.retryAt = nil
        task.attempts = 0
        put(task)
        dirty = true
        return [.save(task)]
    }

    /// The app heard of these finished tasks: they are forgotten (their handed-over files, if still where they were
    /// given, removed). Unfinished and unknown ids are left alone; returns the ids forgotten too.
    mutating func acknowledge(_ key: TransferSessionKey, _ ids: [UInt64]) -> (actions: [TransferAction], forgotten: [UInt64]) {
        var actions: [TransferAction] = []
        var forgotten: [UInt64] = []
        for id in ids {
            guard let task = tasks[id], task.app == key.app, task.session == key.identifier, task.state.isFinished else { continue }
            drop(id)
            actions.append(.delete(task))
            forgotten.append(id)
        }
        return (actions, forgotten)
    }

    /// The app is uninstalled: everything of it goes.
    mutating func forget(_ app: AppID) -> [TransferAction] {
        var actions: [TransferAction] = []
        for task in tasks(of: app) {
            if task.state == .running { actions.append(.stop(id: task.id, attempt: task.attempt)) }
            drop(task.id)
            actions.append(.delete(task))
        }
        for key in sessions.keys.sorted() where key.app == app {
            sessions[key] = nil
            actions.append(.deleteSession(key))
        }
        if relaunches.removeValue(forKey: app) != nil { actions.append(.saveRelaunches(app, TransferRelaunches())) }
        dirty = true
        return actions
    }

    /// Stores `task`, keeping ``runnable`` in step.
    private mutating func put(_ task: TransferTask) {
        tasks[task.id] = task
        if task.state == .waiting || task.state == .running {
            runnable.insert(task.id)
        } else {
            runnable.remove(task.id)
        }
    }

    /// Forgets task `id`.
    private mutating func drop(_ id: UInt64) {
        tasks[id] = nil
        runnable.remove(id)
    }

    // MARK: Deciding what runs

    /// Decides which tasks run: times out those that made no progress for the resource timeout, stops running tasks
    /// that are held back or lost their slot, and starts the tasks that come first and may run. `holds` says what
    /// holds a task back (empty: it may run); `foreground` is the app in front, whose tasks come first.
    mutating func decide(
        at now: Instant, _ limits: TransferLimits, foreground: AppID?, holds: (TransferTask) -> [Hold]
    ) -> (actions: [TransferAction], finished: [TransferTask]) {
        dirty = false
        nextLift = nil
        var actions: [TransferAction] = []
        var finished: [TransferTask] = []
        func consider(_ instant: Instant?) {
            if let instant, instant > now, nextLift == nil || instant < nextLift! { nextLift = instant }
        }
        // Tasks that may run, by app, in the order they come within the app: running first (they keep their place),
        // then oldest first; and all of them, oldest first.
        var eligibleRunning: [AppID: [UInt64]] = [:]
        var eligibleWaiting: [AppID: [UInt64]] = [:]
        var eligibleInOrder: [UInt64] = []
        for id in runnable.sorted() {
            guard let task = tasks[id] else { continue }
            let timeout = task.progressAt + .seconds(double: limits.resourceTimeout)
            if task.state == .waiting, timeout <= now {
                var task = task
                let result = finish(&task, TransferFailure(.timedOut, "no byte moved for \(Int(limits.resourceTimeout)) s (the resource timeout)"), now)
                actions += result.actions
                finished += result.finished.map { [$0] } ?? []
                continue
            }
            consider(timeout)
            let held = holds(task)
            if held.isEmpty {
                if task.state == .running {
                    eligibleRunning[task.app, default: []].append(id)
                } else {
                    eligibleWaiting[task.app, default: []].append(id)
                }
                eligibleInOrder.append(id)
            } else {
                for hold in held { consider(hold.liftsAt) }
                if task.state == .running {
                    actions.append(.stop(id: task.id, attempt: task.attempt))
                    var stopped = task
                    stopped.state = .waiting
                    put(stopped)
                    actions.append(.save(stopped))
                }
            }
        }
        let eligible = eligibleRunning.merging(eligibleWaiting) { running, waiting in running + waiting }
        // The foreground app's tasks first, up to its share; then fair shares: one more task per app per round, the
        // app whose next task is oldest first.
        var chosen: Set<UInt64> = []
        func share(_ app: AppID) -> Int { min(limits.maximumRunningPerApp, eligible[app]?.count ?? 0) }
        if let foreground, let queue = eligible[foreground] {
            for id in queue.prefix(min(share(foreground), limits.maximumRunning)) { chosen.insert(id) }
        }
        let others = eligible.keys.filter { $0 != foreground }.sorted { eligible[$0]![0] < eligible[$1]![0] }
        var round = 0
        while chosen.count < limits.maximumRunning, others.contains(where: { round < share($0) }) {
            for app in others where round < share(app) && chosen.count < limits.maximumRunning {
                chosen.insert(eligible[app]![round])
            }
            round += 1
        }
        for id in eligibleInOrder {
            guard let task = tasks[id] else { continue }
            if chosen.contains(id) {
                guard task.state == .waiting else { continue }
                var started = task
                started.state = .running
                started.attempt += 1
                started.retryAt = nil
                put(started)
                actions.append(.save(started))
                actions.append(.start(started))
            } else if task.state == .running {
                actions.append(.stop(id: task.id, attempt: task.attempt))
                var stopped = task
                stopped.state = .waiting
                put(stopped)
                actions.append(.save(stopped))
            }
        }
        return (actions, finished)
    }
}
