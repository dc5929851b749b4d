import OffstageCore

extension ModelShell {
    /// Carries out one notification command: the app adding, removing and answering, the user tapping, settings and
    /// the time zone changing (SPEC NT-1, NT-2).
    mutating func applyNotification(_ command: ModelCommand, slot: Int) {
        let id = ModelWorld.app(slot)
        switch command {
        case .notify(_, let index, let trigger):
            guard let process = running(slot) else { return }
            let request = NotificationRequest(
                identifier: "n\(index)",
                content: NotificationContent(
                    title: "n\(index)", badge: index == 0 ? 1 : nil,
                    categoryIdentifier: ModelWorld.notificationCategory.identifier),
                trigger: trigger.trigger(at: now))
            feed { core, now throws(CoreError) in
                try core.addNotification(id, pid: process.pid, request, at: now).actions
            }
        case .unnotify(_, let index):
            guard let process = running(slot) else { return }
            let identifiers = index.map { ["n\($0)"] }
            feed { core, now throws(CoreError) in
                try core.removePendingNotifications(id, pid: process.pid, identifiers: identifiers, at: now)
            }
        case .notificationCategories:
            guard let process = running(slot) else { return }
            feed { core, now throws(CoreError) in
                try core.setNotificationCategories(id, pid: process.pid, [ModelWorld.notificationCategory], at: now)
            }
        case .tapNotification(_, let index, let tap):
            // An unknown identifier when the app has nothing delivered: refused, which is part of what is tested.
            let delivered = core.notifications.delivered[id] ?? []
            let identifier = delivered.isEmpty ? "n9" : delivered[index % delivered.count].request.identifier
            feed { core, now throws(CoreError) in
                try core.respondToNotification(id, identifier: identifier, action: tap.actionIdentifier, at: now)
            }
        case .answerWillPresent(_, let present):
            guard let process = running(slot), process.attached else { return }
            let records = process.outstanding.compactMap { callback -> DeliveredNotification? in
                if case .notificationWillPresent(let record) = callback.kind { record } else { nil }
            }
            guard let record = records.first else { return }
            feed { core, now throws(CoreError) in
                try core.answerWillPresent(id, pid: process.pid, key: record.key, presentToUser: present, at: now)
            }
        case .timeZone(let zone):
            var settings = core.device.settings
            settings.timeZone = zone
            feed { core, now throws(CoreError) in core.setDeviceSettings(settings, at: now) }
        case .notificationsAllowed(_, let on):
            guard var settings = core.apps[id]?.app.settings else { return }
            settings.notifications = on
            feed { core, now throws(CoreError) in try core.setAppSettings(settings, for: id, at: now) }
        default:
            break
        }
    }
}
