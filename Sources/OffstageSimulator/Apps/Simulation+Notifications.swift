import OffstageCore

/// Local notifications on virtual time (SPEC NT-1, NT-2): the simulated desktop that shows them, the apps' handlers,
/// and the user's taps, through the same core inputs the daemon's notification service and the CLI use.
extension Simulation {
    /// Carries out a notification action: the simulated desktop shows each delivery once, as the daemon's does;
    /// persistence is the daemon's concern.
    mutating func perform(_ action: NotificationAction) {
        guard case .show(let record) = action else { return }
        guard !shownNotifications.contains(where: { $0.key == record.key }) else { return }
        shownNotifications.append(record)
    }

    /// The app's will-present handler: it asks for a banner when its behaviour says so, else handles it itself.
    mutating func willPresent(_ record: DeliveredNotification, pid: Int32, app id: AppID) {
        willPresentNotifications[id, default: []].append(record)
        do throws(CoreError) {
            perform(
                try core.answerWillPresent(
                    id, pid: pid, key: record.key, presentToUser: behavior(id).presentsNotificationsInForeground, at: now))
        } catch {
            errors.append(error)
        }
    }

    /// The app's process adds a notification request, as `UNUserNotificationCenter.add(_:)` does; returns the
    /// identifiers dropped to stay within the limit. A refusal is recorded in ``errors`` and rethrown.
    @discardableResult
    public mutating func addNotification(_ id: AppID, _ request: NotificationRequest) throws(CoreError) -> [String] {
        guard let pid = core.apps[id]?.process?.pid else {
            let error = CoreError(.appNotRunning, "'\(id)' is not running", fix: "launch it first")
            errors.append(error)
            throw error
        }
        do {
            let (dropped, actions) = try core.addNotification(id, pid: pid, request, at: now)
            perform(actions)
            return dropped
        } catch {
            errors.append(error)
            throw error
        }
    }

    /// The user taps the app's delivered notification, or chooses one of its actions (`offstage notifications tap`).
    public mutating func tapNotification(
        _ id: AppID, identifier: String, action: String = NotificationResponse.defaultAction
    ) throws(CoreError) {
        do {
            perform(try core.respondToNotification(id, identifier: identifier, action: action, at: now))
        } catch {
            errors.append(error)
            throw error
        }
    }

    /// The user (or the machine) sets the device's time zone.
    public mutating func setTimeZone(_ zone: String) {
        var settings = core.device.settings
        settings.timeZone = zone
        perform(core.setDeviceSettings(settings, at: now))
    }
}
