/// Local notification inputs (SPEC NT-1, NT-2): what an app asks of its notifications, what the user does with them,
/// and time. The ``NotificationSchedule`` decides what is pending and what fires; the core decides where a firing goes
/// from the app's state and turns the user's responses into launches and callbacks. `pid` always comes from the
/// caller's connection, so an app can only see and change its own notifications.
extension OffstageCore {
    var notificationLimits: NotificationSchedule.Limits {
        NotificationSchedule.Limits(
            maximumPending: configuration.maximumPendingNotificationsPerApp,
            maximumDelivered: configuration.maximumDeliveredNotificationsPerApp,
            maximumContentBytes: configuration.maximumNotificationContentBytes,
            minimumRepeatInterval: configuration.minimumNotificationRepeatInterval,
            lateAfter: .seconds(double: configuration.notificationLateAfter))
    }

    /// Puts back the notifications the store kept, after ``restore(_:durable:)`` of every app; no actions.
    public mutating func restoreNotifications(
        pending: [(AppID, PendingNotification)], delivered: [DeliveredNotification], badges: [AppID: Int],
        categories: [AppID: [NotificationCategory]]
    ) {
        restoreNotifications(
            NotificationSchedule(restoring: pending, delivered: delivered, badges: badges, categories: categories))
    }

    /// Puts back the notifications the store kept, made into a schedule beforehand (with many, a daemon builds it on
    /// another thread while its apps are read: SPEC §11, restart ≤ 500 ms), after ``restore(_:durable:)`` of every
    /// app; no actions. What belongs to an app no longer installed is left out; the device's time zone is the core's.
    public mutating func restoreNotifications(_ restored: NotificationSchedule) {
        var schedule = restored
        for app in schedule.appsHoldingAnything where apps[app] == nil { _ = schedule.forget(app) }
        schedule.restoreTimeZone(notifications.deviceTimeZone)
        notifications = schedule
    }

    /// The app adds a notification request (replacing one with its identifier). Returns the identifiers of requests
    /// dropped to stay within the limit, soonest kept (SPEC NT-1). On error nothing changes.
    public mutating func addNotification(
        _ id: AppID, pid: Int32, _ request: NotificationRequest, at now: Instant
    ) throws(CoreError) -> (dropped: [String], actions: [CoreAction]) {
        _ = try runningProcess(id, pid: pid)
        let added: (actions: [NotificationAction], dropped: [String])
        do {
            added = try notifications.add(id, request, at: now, limits: notificationLimits)
        } catch {
            log(now, id, .warning, "notification \(QuotedText.quote(request.identifier)) refused: \(error.message)")
            throw error
        }
        perform(added.actions)
        let due = notifications.pending(id, identifier: request.identifier)?.due
        let wait = due.map { String((($0 - now).inSeconds * 10).rounded() / 10) } ?? "?"
        log(now, id, .notification, "scheduled \(QuotedText.quote(request.identifier)) \(request.trigger.summary): due in \(wait) s")
        if !added.dropped.isEmpty {
            log(now, id, .warning, "over \(configuration.maximumPendingNotificationsPerApp) pending notifications: dropped the latest, \(added.dropped.joined(separator: ", "))")
        }
        return (added.dropped, finish(now))
    }

    /// The app removes pending requests by identifier (nil: all of them).
    public mutating func removePendingNotifications(
        _ id: AppID, pid: Int32, identifiers: [String]?, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        perform(identifiers.map { notifications.removePending(id, identifiers: $0) } ?? notifications.removeAllPending(id))
        return finish(now)
    }

    /// Removes delivered notifications by identifier (nil: all of them): asked by the app, or by the user with
    /// `pid` nil (`offstage notifications clear`).
    public mutating func removeDeliveredNotifications(
        _ id: AppID, pid: Int32?, identifiers: [String]?, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        if let pid { _ = try runningProcess(id, pid: pid) } else { _ = try entry(id) }
        perform(notifications.removeDelivered(id, identifiers: identifiers))
        return finish(now)
    }

    /// The user clears delivered notifications (`offstage notifications clear`): the app's with these identifiers
    /// (every one must be delivered, or nothing is removed), all of the app's, or, with no app, every app's. Returns
    /// how many went.
    public mutating func clearDeliveredNotifications(
        _ id: AppID?, identifiers: [String]?, at now: Instant
    ) throws(CoreError) -> (removed: Int, actions: [CoreAction]) {
        guard let id else {
            guard identifiers == nil else {
                throw CoreError(
                    .invalidArgument, "identifiers were given without an app",
                    fix: "name the app whose notifications these are, or give no identifiers to clear every app's")
            }
            var removed = 0
            var actions: [CoreAction] = []
            for app in notifications.delivered.keys.sorted() where apps[app] != nil {
                let cleared = clearDelivered(app, identifiers: nil, at: now)
                removed += cleared.removed
                actions += cleared.actions
            }
            return (removed, actions)
        }
        _ = try entry(id)
        if let identifiers {
            let delivered = Set((notifications.delivered[id] ?? []).map(\.request.identifier))
            if let unknown = identifiers.first(where: { !delivered.contains($0) }) {
                throw CoreError(
                    .noSuchNotification, "'\(id)' has no delivered notification \(QuotedText.quote(unknown)); nothing was cleared",
                    fix: "see `offstage notifications \(id)` for what was delivered")
            }
        }
        return clearDelivered(id, identifiers: identifiers, at: now)
    }

    /// Removes an installed app's delivered notifications as the user, counting them.
    private mutating func clearDelivered(_ id: AppID, identifiers: [String]?, at now: Instant) -> (removed: Int, actions: [CoreAction]) {
        perform(notifications.removeDelivered(id, identifiers: identifiers))
        let actions = finish(now)
        let removed = actions.reduce(0) { count, action in
            guard case .notification(.removeDelivered(_, let keys)) = action else { return count }
            return count + keys.count
        }
        return (removed, actions)
    }

    /// The app sets the number on its icon (`applicationIconBadgeNumber`; nil or 0 removes it).
    public mutating func setBadge(_ id: AppID, pid: Int32, _ badge: Int?, at now: Instant) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        perform(try notifications.setBadge(id, badge))
        return finish(now)
    }

    /// The app registers its notification categories, replacing the ones it had.
    public mutating func setNotificationCategories(
        _ id: AppID, pid: Int32, _ categories: [NotificationCategory], at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        perform(try notifications.setCategories(id, categories))
        return finish(now)
    }

    /// The app's will-present handler chose: with `presentToUser` the notification also goes to the user (a banner
    /// or the list), otherwise the app has handled it. An unknown key changes nothing (already answered).
    public mutating func answerWillPresent(
        _ id: AppID, pid: Int32, key: DeliveryKey, presentToUser: Bool, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        guard key.app == id else {
            throw CoreError(
                .noSuchNotification, "notification \(key) is not the app's",
                fix: "answer only the notifications the app was given")
        }
        perform(notifications.appAnswered(key, presentToUser: presentToUser, limits: notificationLimits))
        return finish(now)
    }

    /// The user tapped the app's delivered notification `identifier`, or chose `action` on it (SPEC NT-2). `default`,
    /// and actions that open the app, bring it to the foreground (launch reason `notification` if it was not running);
    /// other actions wake it, or launch it, in the background; `dismiss` only tells a running app. Either way the app
    /// hears the response (did-receive-response) and the notification leaves the delivered list.
    public mutating func respondToNotification(
        _ id: AppID, identifier: String, action: String = NotificationResponse.defaultAction, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        let entry = try entry(id)
        try checkOpenable(id, entry)
        let (response, button) = try notifications.response(id, identifier: identifier, action: action)
        let opens = action == NotificationResponse.defaultAction || button?.foreground == true
        if opens, device.locked {
            throw CoreError(
                .deviceLocked, "the device is locked; tapping the notification cannot open '\(id)'",
                fix: "run `offstage unlock` first")
        }
        perform(notifications.responded(response))
        log(now, id, .notification, "the user chose \(action) on \(QuotedText.quote(identifier))")
        if action == NotificationResponse.dismissAction {
            // Only a running app hears of a dismissal; nothing is launched for it.
            if let process = entry.process, process.termination == nil { enqueue(id, .notificationResponse(response)) }
            return finish(now)
        }
        notifications.hold(response)
        if opens {
            if device.interruption != nil { device.interruption = nil }
            if let current = device.foregroundApp, current != id { sendToBackground(current, now) }
            bringToForeground(id, now, reason: .notification)
        } else if let process = entry.process, process.termination == nil {
            // Woken only if it may run in the background at all (SPEC SET-2); else it hears it when it next runs.
            if process.frozen, entry.app.settings.backgroundActivity { wakeInBackground(id, now) }
        } else if entry.process == nil {
            // Launched into the background by the rules of every background launch: not after a force-quit (SPEC
            // LC-6), nor for an app that cannot be in the background (LC-7), in a crash loop (LC-9) or with background
            // activity off (SET-2). Then the response waits for the app's next launch.
            if let whyNot = whyNotLaunchedForAccessory(entry, now) {
                let quoted = QuotedText.quote(action)
                log(now, id, .notification, "not launched for \(quoted): \(whyNot); it hears it when it next runs")
            } else {
                launch(id, .notificationAction, now)
            }
        }
        deliverHeldResponses(id)
        return finish(now)
    }

    /// Queues the responses held for the app if its process can take them (it may be launching).
    mutating func deliverHeldResponses(_ id: AppID) {
        guard let process = apps[id]?.process, process.termination == nil else { return }
        for response in notifications.takeResponses(id) { enqueue(id, .notificationResponse(response)) }
    }

    /// Fires what is due (called as time advances), each to the app in front or to the user.
    mutating func fireNotifications(_ now: Instant) {
        guard let due = notifications.nextDue, due <= now else { return }
        let (apps, device) = (self.apps, self.device)
        let firings = notifications.fireDue(at: now, limits: notificationLimits) {
            Self.notificationDestination(apps[$0], device)
        }
        perform(firings.actions)
        for key in firings.suppressed {
            log(now, key.app, .notification, "\(QuotedText.quote(key.identifier)) fired; not shown: notifications are off for the app")
        }
        for action in firings.actions {
            guard case .show(let record) = action else { continue }
            log(now, record.app, .notification, "delivered \(QuotedText.quote(record.request.identifier)) to the user\(record.late ? " (late)" : "")")
        }
        for record in firings.toApps {
            log(now, record.app, .notification, "delivered \(QuotedText.quote(record.request.identifier)) to the app (will-present)")
            enqueue(record.app, .notificationWillPresent(record))
        }
    }

    /// Where a notification of `id` goes now: to the app if it is active in front of an unlocked screen, to nobody if
    /// the user turned its notifications off (SPEC SET-2), else to the user.
    static func notificationDestination(_ entry: AppEntry?, _ device: DeviceState) -> NotificationSchedule.Destination {
        guard let entry, !entry.uninstalling, entry.app.settings.notifications else { return .nobody }
        if device.foregroundApp == entry.app.id, !device.locked, let process = entry.process, process.phase == .active,
            process.attached, process.launchCompleted, process.termination == nil, !process.frozen
        {
            return .app
        }
        return .user
    }

    /// The device's time zone changed: calendar triggers that follow it move.
    mutating func notificationTimeZoneChanged(to zone: String, _ now: Instant) {
        let actions = notifications.timeZoneChanged(to: zone, at: now)
        if !actions.isEmpty { log(now, nil, .notification, "time zone now \(zone): \(actions.count) notification(s) moved") }
        perform(actions)
    }

    /// Carries out the schedule's actions.
    mutating func perform(_ actions: [NotificationAction]) {
        for action in actions { emit(.notification(action)) }
    }

    /// The checks of ``open(_:at:)`` that hold for any way the user opens an app.
    func checkOpenable(_ id: AppID, _ entry: AppEntry) throws(CoreError) {
        guard !entry.uninstalling else {
            throw CoreError(
                .appNotInstalled, "'\(id)' is being uninstalled and cannot be opened",
                fix: "install it again once `offstage apps` no longer lists it")
        }
    }
}
