import Logging
import OffstageCore

/// Carrying out the notification actions (SPEC NT-1, NT-2). A run of consecutive notification actions is carried out
/// in two steps: every row change of the run in one transaction, then what follows from them — the engine's record of
/// the desktop, and the desktop itself. So whatever follows a firing (its desktop notification, the will-present
/// callback after the run) happens after the firing is on the disk, and a burst of firings (the daemon was down at
/// their time, or every app's alarm is at 07:00) is one write, not one per firing. Nothing here decides where a
/// notification goes: the core did.
extension DaemonEngine {
    /// Restores the stored notifications into the core, after the apps (rows of apps no longer installed are left
    /// out by the core), and what the desktop was shown into the presentation: those `reading` read (nil: read them
    /// now). How long it took is logged: with many notifications it is most of a restart (SPEC §11: recovery
    /// ≤ 500 ms), so the daemon starts reading them before the rest (``NotificationsReading``).
    func restoreNotifications(_ reading: NotificationsReading?) throws {
        let waiting = DaemonMetrics.monotonicNanoseconds()
        let read = try (reading ?? NotificationsReading(store)).wait()
        let restoring = DaemonMetrics.monotonicNanoseconds()
        core.restoreNotifications(read.schedule)
        presentation.restore(read.deliveries)
        logger.info(
            "notifications read back",
            metadata: [
                "offstage.pending": "\(read.pendingCount)", "offstage.delivered": "\(read.deliveries.count)",
                "offstage.readMilliseconds": "\(read.readMilliseconds)",
                "offstage.scheduleMilliseconds": "\(read.scheduleMilliseconds)",
                "offstage.waitedMilliseconds": "\((restoring - waiting) / 1_000_000)",
                "offstage.restoreMilliseconds": "\((DaemonMetrics.monotonicNanoseconds() - restoring) / 1_000_000)",
            ])
    }

    /// Carries out the run of notification actions in the action queue from `start` on; returns where the queue goes
    /// on (the first action of another kind).
    func performNotificationRun(from start: Int) -> Int {
        var end = start
        var run: [NotificationAction] = []
        while end < actionQueue.count, case .notification(let action) = actionQueue[end] {
            run.append(action)
            end += 1
        }
        performNotifications(run)
        return end
    }

    /// Carries out notification actions: their row changes in one transaction, then their effects, in order.
    func performNotifications(_ run: [NotificationAction]) {
        let inserted: [Bool]
        do {
            inserted = try store.apply(run)
        } catch {
            // The firings of the run were not recorded: their deliveries are not shown on the desktop (a restart may
            // fire them again, and once on the screen is better than twice).
            logger.error("store write failed: notifications", metadata: ["offstage.error": "\(error)"])
            inserted = Array(repeating: false, count: run.count)
        }
        var shows: [(record: DeliveredNotification, decision: DesktopPresentation.ShowDecision)] = []
        for (action, new) in zip(run, inserted) {
            switch action {
            case .fire(let key, let delivery, _):
                if new, delivery != nil { presentation.recorded(key) }
            case .show(let record):
                shows.append((record, presentation.show(record.key)))
            case .removeDelivered(_, let keys):
                withdraw(presentation.removed(keys))
            case .forgetApp(let app):
                withdraw(presentation.forget(app))
            case .savePending, .removePending, .updateDelivery, .saveBadge, .saveCategories:
                break
            }
        }
        show(shows)
    }

    /// Shows deliveries on the desktop, each at most once: recorded as shown first (all in one transaction), so a
    /// restart in between never shows one again; with no desktop, recorded as never to be shown, so a later start
    /// shows nothing stale.
    func show(_ shows: [(record: DeliveredNotification, decision: DesktopPresentation.ShowDecision)]) {
        var states: [(DeliveryKey, OffstageStore.DesktopState, desktopID: UInt32?)] = []
        var sends: [(record: DeliveredNotification, token: UInt64)] = []
        for (record, decision) in shows {
            switch decision {
            case .skip: continue
            case .markNone: states.append((record.key, .none, nil))
            case .send(let token):
                states.append((record.key, .shown, nil))
                sends.append((record, token))
            }
        }
        guard !states.isEmpty else { return }
        do {
            try store.recordDesktop(states)
        } catch {
            logger.error("store write failed: not shown on the desktop", metadata: ["offstage.error": "\(error)"])
            for (_, token) in sends { _ = presentation.failed(token: token) }
            return
        }
        guard let sink = presentation.desktop else { return }
        for (record, token) in sends {
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
}
