/// Finite-length background tasks (SPEC BT-1..5). `pid` always comes from the caller's connection, so an app
/// can only touch its own tasks.
extension OffstageCore {
    /// Begins a background task; ``BackgroundTaskID/invalid`` when the budget is spent (SPEC BT-5).
    public mutating func beginBackgroundTask(
        _ id: AppID, pid: Int32, name: String, at now: Instant
    ) throws(CoreError) -> (BackgroundTaskID, [CoreAction]) {
        let process = try runningProcess(id, pid: pid)
        guard process.termination == nil, !process.frozen, process.ledger.canBegin(at: now) else {
            log(now, id, .taskBegin, "task '\(name)' refused: background time is spent")
            return (.invalid, finish(now))
        }
        let task = BackgroundTaskID(takeNumber())
        apps[id]?.process?.ledger.begin(task, name: name, at: now)
        log(now, id, .taskBegin, "task \(task) '\(name)' began")
        touched.insert(id)
        return (task, finish(now))
    }

    /// Ends a background task. Ending an unknown or already ended task is harmless and logged (SPEC BT-1).
    public mutating func endBackgroundTask(
        _ id: AppID, pid: Int32, task: BackgroundTaskID, at now: Instant
    ) throws(CoreError) -> (Bool, [CoreAction]) {
        _ = try runningProcess(id, pid: pid)
        guard let ended = apps[id]?.process?.ledger.end(task) else {
            log(now, id, .warning, "end of unknown or already ended background task \(task) ignored")
            return (false, finish(now))
        }
        log(now, id, .taskEnd, "task \(task) '\(ended.name)' ended after \(format((now - ended.begunAt).inSeconds)) s")
        touched.insert(id)
        return (true, finish(now))
    }

    /// Seconds of background time left for the calling app (SPEC BT-3).
    public func backgroundTimeRemaining(_ id: AppID, pid: Int32, at now: Instant) throws(CoreError) -> Double {
        let process = try runningProcess(id, pid: pid)
        return process.phase.isForeground ? .greatestFiniteMagnitude : process.ledger.timeRemaining(at: now)
    }

    func runningProcess(_ id: AppID, pid: Int32) throws(CoreError) -> AppProcess {
        guard let process = try entry(id).process, process.pid == pid else {
            throw CoreError(
                .appNotRunning, "pid \(pid) is not the running process of '\(id)'",
                fix: "call from the app's own process after it has attached")
        }
        return process
    }
}
