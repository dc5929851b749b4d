import OffstageCore

/// Simulated apps taking part in scheduled work (SPEC SCH): they submit, run handlers, complete and resubmit through
/// the core exactly as the SDK does through the daemon.
extension Simulation {
    /// did-finish-launching: the app submits its requests and sets its fetch interval, as apps do at launch.
    mutating func launchFinished(_ pid: Int32, app id: AppID) {
        let tasks = behavior(id).tasks
        for submission in tasks.submitsOnLaunch { submit(submission.request(at: now), pid: pid, app: id) }
        if let interval = tasks.fetchIntervalOnLaunch {
            do throws(CoreError) {
                perform(try core.setFetchInterval(id, pid: pid, interval, at: now))
            } catch {
                errors.append(error)
            }
        }
    }

    mutating func submit(_ request: TaskRequest, pid: Int32, app id: AppID) {
        do throws(CoreError) {
            perform(try core.submitTask(id, pid: pid, request: request, at: now))
        } catch {
            errors.append(error)
        }
    }

    /// A task or fetch handler starts: it completes after the scripted runtime with the next scripted result.
    mutating func startHandler(_ run: UInt64, pid: Int32, app id: AppID) {
        let tasks = behavior(id).tasks
        guard let runtime = tasks.runtime else { return }
        let cursor = resultCursor[id, default: 0]
        resultCursor[id] = cursor + 1
        let result = tasks.results.isEmpty ? TaskResult.newData : tasks.results[cursor % tasks.results.count]
        schedule(.completeRun(pid: pid, run: run, result: result), after: runtime)
    }

    /// The expiration handler: a well-behaved app completes the task at once, as failed.
    mutating func taskExpiring(_ run: UInt64, pid: Int32, app id: AppID) {
        guard behavior(id).tasks.completesOnExpiration else { return }
        queue.removeAll {
            if case .completeRun(pid, run, _) = $0 { return true }
            return false
        }
        completeRun(run, .failed, pid: pid, app: id)
    }

    mutating func completeRun(_ run: UInt64, _ result: TaskResult, pid: Int32, app id: AppID) {
        let request = core.apps[id]?.process?.runs.first { $0.id == run }?.request
        record(id, .taskCompleted(request?.identifier ?? "?", result))
        do throws(CoreError) {
            perform(try core.completeTask(id, pid: pid, run: run, result: result, at: now))
        } catch {
            errors.append(error)
        }
        // The usual pattern: the handler submits its request again for next time.
        if let request, request.kind != .fetch, request.kind != .continued, let delay = behavior(id).tasks.resubmitAfter, processes[pid] != nil {
            var again = request
            again.earliestBegin = delay == .zero ? nil : now + delay
            submit(again, pid: pid, app: id)
        }
    }
}

extension Simulation {
    // MARK: Scheduled work, as the app and the user drive it

    /// The app submits a request from its running process (SPEC SCH-2); errors go to ``errors`` and are returned.
    @discardableResult
    public mutating func submit(_ id: AppID, _ submission: TaskBehavior.Submission) -> CoreError? {
        guard let process = processes.values.first(where: { $0.app == id }) else {
            return CoreError(.appNotRunning, "'\(id)' is not running", fix: "launch it first")
        }
        let before = errors.count
        submit(submission.request(at: now), pid: process.pid, app: id)
        return errors.count > before ? errors.last : nil
    }

    /// The app sets its legacy fetch interval from its running process (SPEC SCH-4).
    public mutating func setFetchInterval(_ id: AppID, _ interval: FetchInterval) throws(CoreError) {
        guard let process = processes.values.first(where: { $0.app == id }) else {
            throw CoreError(.appNotRunning, "'\(id)' is not running", fix: "launch it first")
        }
        perform(try core.setFetchInterval(id, pid: process.pid, interval, at: now))
    }

    /// `offstage run-task` (SPEC SCH-9).
    public mutating func runTaskNow(_ id: AppID, _ identifier: String) throws(CoreError) {
        perform(try core.runTaskNow(id, identifier: identifier, at: now))
    }

    /// `offstage expire-task` (SPEC SCH-9).
    public mutating func expireTaskNow(_ id: AppID, _ identifier: String) throws(CoreError) {
        perform(try core.expireTaskNow(id, identifier: identifier, at: now))
    }

    /// `offstage fetch` (SPEC SCH-9).
    public mutating func fetchNow(_ id: AppID) throws(CoreError) { perform(try core.fetchNow(id, at: now)) }

    /// `offstage device …`: sets conditions by hand.
    public mutating func setConditions(_ overrides: ConditionOverrides) throws(CoreError) {
        perform(try core.setConditionOverrides(overrides, at: now))
    }

    /// The machine's power or network changed.
    public mutating func machineReading(_ reading: MachineReading) {
        perform(core.machineReadingChanged(reading, at: now))
    }

    /// Changes one app's settings (SPEC SET-2).
    public mutating func setAppSettings(_ settings: AppSettings, for id: AppID) throws(CoreError) {
        perform(try core.setAppSettings(settings, for: id, at: now))
    }

    /// `offstage explain` (SPEC SCH-8).
    public func explain(_ id: AppID, _ identifier: String? = nil) throws(CoreError) -> [TaskStatus] {
        try core.explain(id, identifier: identifier, at: now)
    }
}

extension Simulation {
    /// Feeds the core one input by hand, as a shell does for any caller (a test can pass any pid, such as another
    /// app's), and carries out the actions it returns.
    public mutating func input<Value>(
        _ body: (inout OffstageCore, Instant) throws -> (Value, [CoreAction])
    ) rethrows -> Value {
        let now = self.now
        let (value, actions) = try body(&core, now)
        perform(actions)
        return value
    }

    /// Feeds the core one input that returns only actions. See ``input(_:)-(_)``.
    public mutating func input(_ body: (inout OffstageCore, Instant) throws -> [CoreAction]) rethrows {
        let now = self.now
        perform(try body(&core, now))
    }
}
