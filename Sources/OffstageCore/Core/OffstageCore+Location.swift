/// Location inputs (SPEC MODE-3): an app's standard updates and significant-change monitoring, and each fix from the
/// source. `pid` always comes from the caller's connection, so an app can only change its own updates.
extension OffstageCore {
    /// The app starts (or changes) its standard location updates. With `allowsBackground` and without the
    /// `location` mode it fails (SPEC MODE-6) and nothing changes.
    public mutating func startUpdatingLocation(
        _ id: AppID, pid: Int32, _ request: LocationRequest, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        let declared = apps[id]?.app.manifest.backgroundModes.contains(.location) ?? false
        do {
            perform(try modes.location.startUpdating(id, request, declared: declared), now)
        } catch {
            log(now, id, .warning, "location updates refused: \(error.message)")
            throw error
        }
        return finish(now)
    }

    /// The app stops its standard location updates.
    public mutating func stopUpdatingLocation(_ id: AppID, pid: Int32, at now: Instant) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        perform(modes.location.stopUpdating(id), now)
        return finish(now)
    }

    /// The app starts monitoring significant location changes: from now on, even after its process ends or the user
    /// force-quits it, a move of `significantChangeDistance` wakes or launches it (launch reason `location`).
    public mutating func startMonitoringSignificantLocationChanges(
        _ id: AppID, pid: Int32, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        perform(modes.location.startMonitoring(id), now)
        return finish(now)
    }

    /// The app stops monitoring significant location changes.
    public mutating func stopMonitoringSignificantLocationChanges(
        _ id: AppID, pid: Int32, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        perform(modes.location.stopMonitoring(id), now)
        return finish(now)
    }

    /// A new fix from the location source. A fix whose coordinate is impossible is dropped (sources check too).
    public mutating func locationUpdated(_ fix: LocationFix, at now: Instant) -> [CoreAction] {
        guard fix.hasValidCoordinate else {
            log(now, nil, .warning, "a location fix outside −90…90, −180…180 was dropped")
            return finish(now)
        }
        let actions = modes.location.locationUpdated(
            fix, significantDistance: configuration.significantChangeDistance, recipients: locationRecipients(now))
        perform(actions, now)
        return finish(now)
    }

    /// The location source failed: every running app that updates hears of it.
    public mutating func locationSourceFailed(_ message: String, at now: Instant) -> [CoreAction] {
        perform(modes.location.sourceFailed(message, recipients: locationRecipients(now)), now)
        return finish(now)
    }

    /// What the location component needs to know of each app that listens.
    func locationRecipients(_ now: Instant) -> [AppID: ModeRecipient] {
        Dictionary(uniqueKeysWithValues: modes.location.listeners.map { ($0, locationRecipient($0, now)) })
    }

    /// What the location component needs to know of the app when a fix arrives.
    func locationRecipient(_ id: AppID, _ now: Instant) -> ModeRecipient {
        guard let entry = apps[id] else { return .gone }
        if let process = entry.process, process.termination == nil {
            return .running(frozen: process.frozen, mayWake: entry.app.settings.backgroundActivity)
        }
        return .notRunning(whyNot: whyNotLaunchedForLocation(entry, now))
    }

    /// Why the system may not launch the app for a significant change, or nil when it may. A force-quit does not
    /// stop it (SPEC LC-6's exception); an uninstall, background activity off (SET-2), a crash loop (LC-9), a
    /// process still ending and shutdown do.
    func whyNotLaunchedForLocation(_ entry: AppEntry, _ now: Instant) -> String? {
        if entry.uninstalling { return "it is being uninstalled" }
        if shuttingDown { return "the daemon is shutting down" }
        if entry.process != nil { return "its previous process is still ending" }
        if !entry.app.settings.backgroundActivity {
            return "background activity is off for this app (`offstage settings \(entry.app.id) background-activity=on`)"
        }
        if let notBefore = entry.durable.crashLoop.notBefore, now < notBefore {
            return "it crashed in the background; no background launch before \(notBefore.clockTime)"
        }
        return nil
    }
}

extension CallbackKind {
    /// Whether this is a delivery of locations (which coalesce while queued).
    var isLocations: Bool {
        if case .locations = self { true } else { false }
    }
}
