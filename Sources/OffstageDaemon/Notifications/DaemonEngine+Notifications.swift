import Logging
import OffstageCore

/// Carrying out the notification actions (SPEC NT-1, NT-2): every change goes to the store first, synchronously and
/// in the order of the actions, and only then to the desktop, so whatever follows a firing in the action list (the
/// desktop notification, a will-present callback) happens after the firing is on the disk. Nothing here decides
/// where a notification goes: the core did.
extension DaemonEngine {
    /// Puts the stored notifications back into the core, after the apps (rows of apps no longer installed are left
    /// out by the core), and what the desktop was shown into the presentation.
    func restoreNotifications(_ stored: OffstageStore.StoredNotifications) {
        core.restoreNotifications(
            pending: stored.pending, delivered: stored.deliveries.map(\.record), badges: stored.badges,
            categories: stored.categories)
        presentation.restore(stored.deliveries)
    }

    /// Carries out one notification action.
    func performNotification(_ action: NotificationAction) {
        switch action {
        case .show(let record):
            show(record)
        case .fire(let key, let delivery, _):
            do {
                if try store.apply(action), delivery != nil { presentation.recorded(key) }
            } catch {
                // Without its row the delivery is not shown on the desktop: a restart might fire it again, and once
                // on the screen is better than twice.
                logger.error(
                    "store write failed: a notification's firing", metadata: ["offstage.key": "\(key)", "offstage.error": "\(error)"])
            }
        case .removeDelivered(_, let keys):
            persist { try store.apply(action) }
            withdraw(presentation.removed(keys))
        case .forgetApp(let app):
            persist { try store.apply(action) }
            withdraw(presentation.forget(app))
        case .savePending, .removePending, .updateDelivery, .saveBadge, .saveCategories:
            persist { try store.apply(action) }
        }
    }

    /// Shows a delivery on the desktop, at most once per delivery: recorded as shown first, so a restart between the
    /// two never shows it again; with no desktop, recorded as never to be shown, so a later start shows nothing stale.
    func show(_ record: DeliveredNotification) {
        let key = record.key
        switch presentation.show(key) {
        case .skip:
            return
        case .markNone:
            persist { try store.recordDesktop(key, state: .none, desktopID: nil) }
        case .send(let token):
            guard let sink = presentation.desktop else { return }
            do {
                try store.recordDesktop(key, state: .shown, desktopID: nil)
            } catch {
                logger.error("store write failed: not shown on the desktop", metadata: ["offstage.key": "\(key)", "offstage.error": "\(error)"])
                _ = presentation.failed(token: token)
                return
            }
            let category = core.notifications.categories[record.app]?.first {
                $0.identifier == record.request.content.categoryIdentifier
            }
            let content = NotificationDesktopContent(
                record, category: category, bundlePath: core.apps[record.app]?.app.bundlePath,
                expireTimeout: presentation.expireTimeout)
            do {
                try sink.show(content, token: token)
            } catch {
                desktopEvent(.failed(token: token, message: "\(error)"))
            }
        }
    }

    /// Takes notifications off the desktop.
    func withdraw(_ desktopIDs: [UInt32]) {
        guard let sink = presentation.desktop else { return }
        for id in desktopIDs {
            do {
                try sink.withdraw(desktopID: id)
            } catch {
                logger.debug("desktop notification not withdrawn", metadata: ["offstage.desktopID": "\(id)", "offstage.error": "\(error)"])
            }
        }
    }

    /// What the desktop reported, on the event loop: its answers are recorded, the user's clicks and dismissals become
    /// the core's responses (SPEC NT-2), as a tap from the CLI would.
    func desktopEvent(_ event: NotificationDesktopEvent) {
        eventLoop.preconditionInEventLoop()
        switch event {
        case .shown(let token, let desktopID):
            guard let (key, removed) = presentation.shown(token: token, desktopID: desktopID) else { return }
            if removed {
                withdraw([desktopID])
            } else {
                persist { try store.recordDesktop(key, state: .shown, desktopID: desktopID) }
            }
        case .failed(let token, let message):
            guard let key = presentation.failed(token: token) else { return }
            persist { try store.recordDesktop(key, state: .none, desktopID: nil) }
            logger.warning("the desktop did not show a notification", metadata: ["offstage.key": "\(key)", "offstage.error": "\(message)"])
        case .clicked(let desktopID, let action):
            guard let key = presentation.key(forDesktopID: desktopID) else { return }
            respond(key, action: action)
        case .closed(let desktopID, let byUser):
            guard let key = presentation.closed(desktopID: desktopID) else { return }
            persist { try store.recordDesktop(key, state: .shown, desktopID: nil) }
            if byUser { respond(key, action: NotificationResponse.dismissAction) }
        case .disconnected(let reason):
            presentation.disconnect(reason)
            logger.warning("notifications are no longer shown on the desktop: \(reason)")
        }
    }

    /// The user chose `action` on the desktop's notification of `key`.
    private func respond(_ key: DeliveryKey, action: String) {
        do {
            apply(try core.respondToNotification(key.app, identifier: key.identifier, action: action, at: now))
        } catch {
            // A click the core refuses (the device is locked, the app is being uninstalled) changes nothing.
            logger.notice(
                "the desktop's \(action) on a notification did nothing: \(error)", metadata: ["offstage.key": "\(key)"])
        }
    }

    /// From now on notifications are shown on `sink`, or, without one, nowhere for `reason`.
    func useDesktop(_ sink: (any NotificationDesktop)?, unavailable reason: String) {
        eventLoop.preconditionInEventLoop()
        presentation.expireTimeout = configuration.daemon.desktopNotificationExpireTimeout
        if let sink {
            presentation.connect(sink)
            logger.info("notifications are shown on the desktop")
        } else {
            presentation.disconnect(reason)
            logger.info("notifications are not shown on a desktop: \(reason)")
        }
    }
}
