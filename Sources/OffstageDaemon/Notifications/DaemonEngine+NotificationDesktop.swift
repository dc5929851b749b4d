import Logging
import OffstageCore

/// The desktop's side (SPEC NT-2): connecting to it, taking notifications off it, and what it reports — its answers,
/// recorded in the store, and the user's clicks and dismissals, which become the core's responses as a tap from the
/// CLI would.
extension DaemonEngine {
    /// From now on notifications are shown on `sink`, or, without one, nowhere for `reason`. Said in the log at the
    /// default level: whether a desktop shows them is the first thing a user wonders about when none appears.
    func useDesktop(_ sink: (any NotificationDesktop)?, unavailable reason: String) {
        eventLoop.preconditionInEventLoop()
        presentation.expireTimeout = configuration.daemon.desktopNotificationExpireTimeout
        if let sink {
            presentation.connect(sink)
            logger.notice("notifications are shown on the desktop: \(sink)")
        } else {
            presentation.disconnect(reason)
            let fallback = "they are in the delivered list (offstage notifications)"
            logger.notice("notifications are not shown on a desktop: \(reason); \(fallback)")
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

    /// What the desktop reported, on the event loop.
    func desktopEvent(_ event: NotificationDesktopEvent) {
        eventLoop.preconditionInEventLoop()
        if progressDesktopEvent(event) { return }
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
}
