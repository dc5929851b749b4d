import OffstageCore

/// Continued processing as the app and the user drive it (SPEC SCH-11): the app submits from the foreground and reports
/// progress through the core, exactly as the SDK does through the daemon; the user cancels.
extension Simulation {
    /// The app submits a continued-processing request from its running process; errors go to ``errors`` and are
    /// returned.
    @discardableResult
    public mutating func submitContinued(
        _ id: AppID, _ identifier: String, title: String, subtitle: String = "",
        strategy: ContinuedTaskDetails.Strategy = .queue
    ) -> CoreError? {
        guard let process = processes.values.first(where: { $0.app == id }) else {
            return CoreError(.appNotRunning, "'\(id)' is not running", fix: "launch it first")
        }
        let before = errors.count
        let request = TaskRequest(
            identifier: identifier, kind: .continued, submittedAt: now,
            continued: ContinuedTaskDetails(title: title, subtitle: subtitle, strategy: strategy))
        submit(request, pid: process.pid, app: id)
        return errors.count > before ? errors.last : nil
    }

    /// The app submits `request` as it is (any kind, any field), as a misbehaving app might; errors go to ``errors``
    /// and are returned.
    @discardableResult
    public mutating func submitRequest(_ id: AppID, _ request: TaskRequest) -> CoreError? {
        guard let process = processes.values.first(where: { $0.app == id }) else {
            return CoreError(.appNotRunning, "'\(id)' is not running", fix: "launch it first")
        }
        let before = errors.count
        submit(request, pid: process.pid, app: id)
        return errors.count > before ? errors.last : nil
    }

    /// The app reports progress of its running task `identifier` (or of `run`, from `pid`, as given).
    public mutating func reportProgress(
        _ id: AppID, _ identifier: String, completed: Int64, total: Int64, title: String? = nil, run: UInt64? = nil,
        pid: Int32? = nil
    ) throws(CoreError) {
        guard let process = processes.values.first(where: { $0.app == id }),
            let found = run ?? core.apps[id]?.process?.runs.first(where: { $0.request.identifier == identifier })?.id
        else { throw CoreError(.noSuchTask, "'\(identifier)' of '\(id)' is not running", fix: "start it first") }
        perform(try core.reportTaskProgress(
            id, pid: pid ?? process.pid, run: found, completed: completed, total: total, title: title, subtitle: nil, at: now))
    }

    /// `offstage cancel-task`: the user cancels a continued-processing task. Returns what the CLI prints.
    @discardableResult
    public mutating func cancelContinued(_ id: AppID, _ identifier: String) throws(CoreError) -> String {
        let (message, actions) = try core.cancelContinuedTask(id, identifier: identifier, at: now)
        perform(actions)
        return message
    }

    /// The app's continued-processing tasks as `offstage apps` shows them.
    public func continuedTasks(of id: AppID) -> [ContinuedTaskView] { core.status(of: id, at: now)?.continued ?? [] }

    /// The system kills the app's process (SIGKILL), as for memory.
    public mutating func killProcess(of id: AppID) {
        guard let pid = processes.values.first(where: { $0.app == id })?.pid else { return }
        exitNow(pid, .signaled(9))
    }
}
