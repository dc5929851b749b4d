/// Installing, upgrading and uninstalling apps, and the user's settings (SPEC MAN-3, SET).
extension OffstageCore {
    /// The result of an install.
    public enum InstallOutcome: String, Sendable, Codable {
        /// A new app.
        case installed
        /// The same id was installed again: upgraded in place, settings and pending work kept.
        case upgraded
    }

    /// Installs an app or upgrades it in place. The shell has already copied the bundle.
    /// An upgrade keeps the user's settings and the app's durable state; a running old version is ended.
    /// An app whose uninstall is still finishing (its process is ending) cannot be installed again until it has
    /// gone: the old process must not share the new version's identity, folders or group.
    public mutating func install(_ app: InstalledApp, at now: Instant) throws(CoreError) -> (InstallOutcome, [CoreAction]) {
        guard var entry = apps[app.id] else {
            scheduleAgain(app.id)
            apps[app.id] = AppEntry(app: app)
            apps[app.id]?.durable.schedule.usage.start(at: now)
            log(now, app.id, .install, "installed from \(app.bundlePath)")
            emit(.saveApp(app.id))
            return (.installed, finish(now))
        }
        guard !entry.uninstalling else {
            let pid = entry.process?.pid.map { " (pid \($0))" } ?? ""
            let wait = format(configuration.willTerminateTimeout + configuration.terminationGrace)
            throw CoreError(
                .alreadyRunning, "'\(app.id)' is still being uninstalled: its process\(pid) is ending",
                fix: "install it again once `offstage apps` no longer lists it (at most \(wait) s)")
        }
        scheduleAgain(app.id)
        var upgraded = app
        upgraded.settings = entry.app.settings
        entry.app = upgraded
        apps[app.id] = entry
        log(now, app.id, .install, "upgraded in place")
        emit(.saveApp(app.id))
        perform(modes.manifestChanged(app.id, declared: upgraded.manifest.backgroundModes), now)
        if entry.process != nil { terminate(app.id, .upgraded, .graceful, now) }
        return (.upgraded, finish(now))
    }

    /// Uninstalls an app: ends its process (will-terminate if running, silently if suspended) and then
    /// forgets everything it had (SPEC MAN-3, LC-5). With a process, the intent is saved first, so a restart of the
    /// daemon before the process has gone finishes the uninstall instead of bringing the app back.
    public mutating func uninstall(_ id: AppID, at now: Instant) throws(CoreError) -> [CoreAction] {
        let entry = try entry(id)
        apps[id]?.uninstalling = true
        scheduleAgain(id)
        apps[id]?.pendingOpen = false
        if device.appBeforeLock == id { device.appBeforeLock = nil }
        if entry.process != nil {
            if device.foregroundApp == id {
                device.foregroundApp = nil
                emit(.saveDevice)
            }
            if !entry.uninstalling {
                emit(.saveApp(id))
                log(now, id, .uninstall, "uninstall requested: ending its process first")
            }
            terminate(id, .uninstalled, .graceful, now)
        } else {
            forgetUninstalled(id, entry, "uninstalled", now)
        }
        return finish(now)
    }

    /// After a restart, once the apps are restored and the surviving processes adopted: uninstalls that were
    /// acknowledged but not finished are finished (a surviving process is killed without a callback — the user
    /// asked for the app to go before the restart), and the scheduler decides.
    public mutating func recover(at now: Instant) -> [CoreAction] {
        for id in apps.keys.sorted() where apps[id]?.uninstalling == true {
            guard let entry = apps[id] else { continue }
            scheduleAgain(id)
            if entry.process != nil {
                terminate(id, .uninstalled, .immediate, now)
            } else {
                forgetUninstalled(id, entry, "uninstalled (finished after a daemon restart)", now)
            }
        }
        // What the app in front had not answered when the daemon stopped goes to the user; what was delivered is
        // shown on the desktop if it was not yet (the shell shows each delivery once); what fell due while the
        // daemon was down fires now, marked late (SPEC NT-2).
        perform(notifications.handToUser(nil, limits: notificationLimits))
        for app in notifications.delivered.keys.sorted() {
            for record in notifications.delivered[app] ?? [] { emit(.notification(.show(record))) }
        }
        schedulerDirty = true
        return advance(to: now)
    }

    /// Forgets an app whose process is gone: its modes, its notifications, its files (SPEC MAN-3).
    mutating func forgetUninstalled(_ id: AppID, _ entry: AppEntry, _ message: String, _ now: Instant) {
        apps[id] = nil
        // Its restriction is lifted with it.
        perAppStale.insert(id)
        perform(modes.forget(id), now)
        perform(notifications.forget(id))
        perform(pushes.forget(id, reason: "'\(id)' was uninstalled"), now)
        perform(transfers.forget(id))
        emit(.forget(id, bundlePath: entry.app.bundlePath))
        log(now, id, .uninstall, message)
    }

    /// Changes device-wide settings.
    public mutating func setDeviceSettings(_ settings: DeviceSettings, at now: Instant) -> [CoreAction] {
        guard settings != device.settings else { return finish(now) }
        let old = device.settings
        device.settings = settings
        emit(.saveDevice)
        schedulerDirty = true
        for (name, value) in SettingsEditor.values(of: settings)
        where SettingsEditor.values(of: old).first(where: { $0.0 == name })?.1 != value && name != "multitasking" {
            log(now, nil, .settings, "\(name) \(value ? "on" : "off")")
        }
        post(.settingsChange, now)
        if old.timeZone != settings.timeZone {
            log(now, nil, .settings, "time zone \(settings.timeZone)")
            notificationTimeZoneChanged(to: settings.timeZone, now)
            post(.timeZoneChange, now)
        }
        if old.multitaskingSupported != settings.multitaskingSupported {
            log(now, nil, .settings, "multitasking \(settings.multitaskingSupported ? "supported" : "not supported")")
        }
        if old.multitaskingSupported && !settings.multitaskingSupported {
            // Without multitasking no app is in the background or suspended (SPEC LC-7): those that are end now, as
            // they would have had they left the foreground under this setting (running ones get will-terminate).
            for id in apps.keys.sorted() {
                guard let process = apps[id]?.process, process.termination == nil, !process.phase.isForeground
                else { continue }
                terminate(id, .multitaskingOff, .graceful, now)
            }
        }
        return finish(now)
    }

    /// Changes the user's settings for one app.
    public mutating func setAppSettings(_ settings: AppSettings, for id: AppID, at now: Instant) throws(CoreError) -> [CoreAction] {
        let entry = try entry(id)
        guard entry.app.settings != settings else { return finish(now) }
        apps[id]?.app.settings = settings
        emit(.saveApp(id))
        scheduleAgain(id)
        transfers.dirty = true
        // Whether a mode may keep it running depends on its settings (SPEC SET-2).
        touched.insert(id)
        post(.settingsChange, to: id, now)
        log(now, id, .settings, "settings changed")
        return finish(now)
    }

    /// The daemon is shutting down: running apps get will-terminate, suspended ones are killed silently.
    public mutating func shutdown(at now: Instant) -> [CoreAction] {
        shuttingDown = true
        schedulerDeadline = nil
        closeAllWaits(now)
        // Running transfers stop (and resume from their checkpoints at the next start).
        transfers.dirty = true
        for id in apps.keys.sorted() where apps[id]?.process != nil {
            terminate(id, .shutdown, .graceful, now)
        }
        return finish(now)
    }
}
