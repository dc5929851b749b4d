/// What an app may ask of the scheduler (SPEC SCH-1, SCH-2, SCH-4). `pid` always comes from the caller's connection,
/// so an app can only touch its own requests.
extension OffstageCore {
    /// Checks that the app may register a launch handler for `identifier` (SPEC SCH-1): it must be listed in
    /// `BGTaskSchedulerPermittedIdentifiers`.
    public func checkTaskIdentifier(_ id: AppID, pid: Int32, identifier: String) throws(CoreError) {
        let process = try runningProcess(id, pid: pid)
        _ = process
        try validateIdentifier(identifier)
        let manifest = try entry(id).app.manifest
        guard manifest.permittedTaskIdentifiers.contains(identifier) else { throw notListed(identifier, id) }
    }

    /// Submits a request; one with the same identifier is replaced (SPEC SCH-2).
    public mutating func submitTask(
        _ id: AppID, pid: Int32, request: TaskRequest, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        let process = try runningProcess(id, pid: pid)
        let entry = try entry(id)
        let manifest = entry.app.manifest
        try validateIdentifier(request.identifier)
        if request.kind == .continued {
            try submitContinued(id, process, request, now)
            return finish(now)
        }
        guard request.kind != .fetch else {
            throw CoreError(
                .invalidArgument, "the legacy background fetch is not submitted as a request",
                fix: "call setMinimumBackgroundFetchInterval instead")
        }
        if let mode = request.kind.requiredMode, !manifest.declares(mode) {
            throw CoreError(
                .notPermitted,
                "'\(id)' does not declare the '\(mode.rawValue)' background mode a \(request.kind.rawValue) request needs",
                fix: "add '\(mode.rawValue)' to UIBackgroundModes in the app's Info.plist")
        }
        guard manifest.permittedTaskIdentifiers.contains(request.identifier) else { throw notListed(request.identifier, id) }
        if let reason = unavailability(of: entry) {
            throw CoreError(.unavailable, "background work cannot be scheduled for '\(id)': \(reason)", fix: unavailableFix(entry))
        }
        if let earliest = request.earliestBegin {
            let ahead = (earliest - now).inSeconds
            if ahead > configuration.maximumEarliestBeginAhead {
                throw CoreError(
                    .invalidArgument,
                    "earliest begin date of '\(request.identifier)' is \(format(ahead / 86_400)) days ahead, more than \(format(configuration.maximumEarliestBeginAhead / 86_400))",
                    fix: "submit it again closer to the time")
            }
            if -ahead > configuration.maximumEarliestBeginPast {
                throw CoreError(
                    .invalidArgument,
                    "earliest begin date of '\(request.identifier)' is \(format(-ahead / 86_400)) days in the past",
                    fix: "leave the earliest begin date nil to run as soon as the system sees fit")
            }
        }
        let schedule = entry.durable.schedule
        let replacing = schedule.requests[request.identifier] != nil
        if request.kind == .processing, !(schedule.requests[request.identifier]?.kind == .processing),
            schedule.processingCount >= configuration.maxProcessingRequests
        {
            throw CoreError(
                .tooManyPendingRequests,
                "'\(id)' already has \(schedule.processingCount) pending processing requests, the most allowed",
                fix: "cancel one (cancel(taskRequestWithIdentifier:)) before submitting another")
        }
        var stored = request
        stored.submittedAt = now
        apps[id]?.durable.schedule.requests[request.identifier] = stored
        emit(.saveApp(id))
        let when = request.earliestBegin.map { " not before \($0.clockTime)" } ?? ""
        log(now, id, .schedule, "\(replacing ? "replaced" : "submitted") \(request.kind.rawValue) request '\(request.identifier)'\(when)")
        scheduleAgain(id)
        return finish(now)
    }

    /// Cancels a pending request; cancelling one that is not pending is harmless. Returns whether one was pending.
    public mutating func cancelTask(
        _ id: AppID, pid: Int32, identifier: String, at now: Instant
    ) throws(CoreError) -> (Bool, [CoreAction]) {
        _ = try runningProcess(id, pid: pid)
        guard apps[id]?.durable.schedule.requests.removeValue(forKey: identifier) != nil else {
            log(now, id, .warning, "cancel of '\(identifier)', which is not pending, ignored")
            return (false, finish(now))
        }
        emit(.saveApp(id))
        log(now, id, .schedule, "cancelled request '\(identifier)'")
        scheduleAgain(id)
        return (true, finish(now))
    }

    /// Cancels every pending request of the app.
    public mutating func cancelAllTasks(_ id: AppID, pid: Int32, at now: Instant) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        let count = apps[id]?.durable.schedule.requests.count ?? 0
        apps[id]?.durable.schedule.requests = [:]
        emit(.saveApp(id))
        log(now, id, .schedule, "cancelled all \(count) pending request(s)")
        scheduleAgain(id)
        return finish(now)
    }

    /// The app's pending requests, sorted by identifier.
    public func pendingTasks(_ id: AppID, pid: Int32) throws(CoreError) -> [TaskRequest] {
        _ = try runningProcess(id, pid: pid)
        return try entry(id).durable.schedule.requests.values.sorted { $0.identifier < $1.identifier }
    }

    /// Sets the legacy fetch interval (SPEC SCH-4). An interval other than `never` needs the `fetch` mode.
    public mutating func setFetchInterval(
        _ id: AppID, pid: Int32, _ interval: FetchInterval, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        if case .seconds(let seconds) = interval {
            try CoreError.checking { () throws(NumberOutOfRange) in
                try CheckedNumber.finite(seconds, field: "seconds", in: 0 ... CheckedNumber.longestDuration, unit: "seconds")
            }
        }
        if interval != .never, try !entry(id).app.manifest.declares(.fetch) {
            throw CoreError(
                .notPermitted, "'\(id)' does not declare the 'fetch' background mode background fetch needs",
                fix: "add 'fetch' to UIBackgroundModes in the app's Info.plist")
        }
        guard apps[id]?.durable.schedule.fetchInterval != interval else { return finish(now) }
        apps[id]?.durable.schedule.fetchInterval = interval
        emit(.saveApp(id))
        log(now, id, .schedule, "minimum background fetch interval: \(interval)")
        scheduleAgain(id)
        return finish(now)
    }

    // MARK: Validation

    func validateIdentifier(_ identifier: String) throws(CoreError) {
        guard !identifier.isEmpty, identifier.utf8.count <= 255,
            !identifier.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw CoreError(
                .invalidArgument,
                "task identifier \(QuotedText.quote(identifier)) is empty, longer than 255 bytes or holds control characters",
                fix: "use a reverse-DNS identifier such as com.example.refresh")
        }
    }

    func notListed(_ identifier: String, _ id: AppID) -> CoreError {
        CoreError(
            .notPermitted, "'\(identifier)' is not in the BGTaskSchedulerPermittedIdentifiers of '\(id)'",
            fix: "list it in BGTaskSchedulerPermittedIdentifiers in the app's Info.plist and install the app again")
    }

    /// Why the app cannot schedule background work at all right now, if it cannot (SPEC SCH-2 `unavailable`).
    func unavailability(of entry: AppEntry) -> String? {
        if !device.settings.backgroundRefresh { return "background app refresh is off for the device" }
        if !entry.app.settings.backgroundRefresh { return "background app refresh is off for this app" }
        if !entry.app.settings.backgroundActivity { return "background activity is off for this app" }
        if device.settings.lowPowerMode { return "low power mode is on" }
        return nil
    }

    func unavailableFix(_ entry: AppEntry) -> String {
        if !device.settings.backgroundRefresh { return "the user can turn it on: `offstage settings background-refresh=on`" }
        if !entry.app.settings.backgroundRefresh {
            return "the user can turn it on: `offstage settings --app \(entry.app.id) background-refresh=on`"
        }
        if !entry.app.settings.backgroundActivity {
            return "the user can turn it on: `offstage settings --app \(entry.app.id) background-activity=on`"
        }
        return "submit again when low power mode is off (`offstage settings low-power=off`)"
    }
}
