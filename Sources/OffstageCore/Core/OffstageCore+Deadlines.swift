/// One timer for the whole system: the shell arms it for ``OffstageCore/nextDeadline`` and calls
/// ``OffstageCore/advance(to:)`` when it fires. With nothing due there is no deadline and no wake-up.
extension OffstageCore {
    /// The earliest instant at which the core has something to do, or nil. It looks only at the apps whose process
    /// has a deadline (kept in ``processDeadlines``), not at every installed app: the shell asks after every input.
    public var nextDeadline: Instant? {
        var earliest: Instant? = schedulerDeadline
        if let due = notifications.nextDue, earliest == nil || due < earliest! { earliest = due }
        if let due = pushes.nextRelease(pushLimits), earliest == nil || due < earliest! { earliest = due }
        for due in [
            transfers.nextLift, transferRelaunchAt, usage.nextSplit(configuration.localClock), nextMemoryEnding,
        ] {
            if let due, earliest == nil || due < earliest! { earliest = due }
        }
        for candidate in processDeadlines.values where earliest == nil || candidate < earliest! {
            earliest = candidate
        }
        return earliest
    }

    static func deadlines(of process: AppProcess) -> [Instant] {
        var result: [Instant] = []
        if let termination = process.termination {
            if let at = termination.escalateAt { result.append(at) }
            return result
        }
        if !process.launchCompleted, let at = process.launchDeadline { result.append(at) }
        if !process.attached, let at = process.reattachDeadline { result.append(at) }
        if let at = process.inFlight?.deadline { result.append(at) }
        if let at = process.ledger.expirationDue { result.append(at) }
        if let at = process.ledger.overrunDue { result.append(at) }
        if let at = process.suspendAt { result.append(at) }
        for run in process.runs { result.append(run.deadline) }
        for run in process.pushRuns { result.append(run.deadline) }
        for run in process.transferRuns { result.append(run.deadline) }
        return result
    }

    /// The app's earliest deadline: its process's, or a mode's (which may exist with no process: a relaunch).
    func earliestDeadline(of id: AppID) -> Instant? {
        guard apps[id] != nil else { return nil }
        let process = apps[id]?.process.flatMap { Self.deadlines(of: $0).min() }
        return [process, modeDeadline(of: id)].compactMap { $0 }.min()
    }

    /// Recomputes the app's entry in ``processDeadlines`` from its process and modes as they are now.
    mutating func refreshProcessDeadline(_ id: AppID) {
        let earliest = earliestDeadline(of: id)
        if processDeadlines[id] != earliest { processDeadlines[id] = earliest }
    }

    /// The apps whose kept earliest deadline differs from the one their process has now, though no input marked
    /// them as changed: empty when every change to a process went through ``finish(_:)`` (the model-based tests
    /// check this after every input, since a stale entry would be a timer armed too late or never).
    public func processDeadlinesOutOfDate() -> [AppID] {
        var outOfDate: [AppID] = []
        for id in Set(apps.keys).union(processDeadlines.keys).sorted() {
            if processDeadlines[id] != earliestDeadline(of: id) { outOfDate.append(id) }
        }
        return outOfDate
    }

    /// Does everything due at or before `now`.
    public mutating func advance(to now: Instant) -> [CoreAction] {
        for (id, deadline) in processDeadlines where deadline <= now { touched.insert(id) }
        fireNotifications(now)
        releaseHeldPushes(now)
        return finish(now)
    }
}
