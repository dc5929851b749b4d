import Foundation

/// The legacy local-notification calls of `UIApplication` (SPEC NT-1): a thin layer over the
/// ``UserNotificationCenter``. Failures are written to standard error, as these calls cannot report them; use the
/// center to handle them.
extension Application {
    /// Schedules `notification` at its fire date (at once without one). Its identifier is made the first time and
    /// kept in its ``LocalNotification/userInfo``: scheduling the same object again replaces the pending one.
    public func scheduleLocalNotification(_ notification: LocalNotification) {
        schedule(notification, now: false, "scheduleLocalNotification")
    }

    /// Delivers `notification` now, whatever its fire date and repeat interval.
    public func presentLocalNotificationNow(_ notification: LocalNotification) {
        schedule(notification, now: true, "presentLocalNotificationNow")
    }

    private func schedule(_ notification: LocalNotification, now: Bool, _ name: String) {
        let identifier = notification.identifier ?? UUID().uuidString
        do throws(NotificationError) {
            let request = try notification.request(identifier: identifier, now: now)
            notification.userInfo = request.content.userInfo
            let dropped = try UserNotificationCenter.current().addNow(request)
            if !dropped.isEmpty {
                reportToDeveloper(
                    "\(name): over the limit of pending notifications, the latest were dropped: "
                        + dropped.joined(separator: ", "))
            }
        } catch {
            reportToDeveloper("\(name) failed: \(error)")
        }
    }

    /// Cancels a scheduled notification (one that was scheduled, or one of ``scheduledLocalNotifications``).
    public func cancelLocalNotification(_ notification: LocalNotification) {
        guard let identifier = notification.identifier else { return }
        UserNotificationCenter.current().removePendingNotificationRequests(withIdentifiers: [identifier])
    }

    /// Cancels every pending notification of the app (those scheduled through the center too).
    public func cancelAllLocalNotifications() {
        UserNotificationCenter.current().removeAllPendingNotificationRequests()
    }

    /// The app's pending notifications, soonest first, each with its next fire date. Setting it replaces them all.
    public var scheduledLocalNotifications: [LocalNotification] {
        get {
            do throws(NotificationError) {
                return try UserNotificationCenter.current().pendingNow().map {
                    LocalNotification(NotificationRequest($0.request), due: WireTime.date($0.due))
                }
            } catch {
                reportToDeveloper("scheduledLocalNotifications failed: \(error)")
                return []
            }
        }
        set {
            cancelAllLocalNotifications()
            for notification in newValue { scheduleLocalNotification(notification) }
        }
    }

    /// The number on the app's icon; 0 for none. Setting it to 0 removes it.
    public var applicationIconBadgeNumber: Int {
        get {
            do throws(NotificationError) {
                return try UserNotificationCenter.current().settingsNow().badgeCount
            } catch {
                reportToDeveloper("applicationIconBadgeNumber failed: \(error)")
                return 0
            }
        }
        set {
            do throws(NotificationError) {
                try UserNotificationCenter.current().setBadgeNow(newValue)
            } catch {
                reportToDeveloper("setting applicationIconBadgeNumber failed: \(error)")
            }
        }
    }
}
