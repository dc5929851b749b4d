import Foundation
import OffstageProtocol

/// The app's local notifications, as `UNUserNotificationCenter` (SPEC NT-1, NT-2): schedule them, list and remove
/// pending and delivered ones, set the icon's badge, and hear — through the ``delegate`` — when one fires while the app
/// is in front and when the user responds to one.
///
/// ```swift
/// let center = UserNotificationCenter.current()
/// center.delegate = self
/// var content = NotificationContent()
/// content.title = "Alarm"
/// content.body = "Time to wake up"
/// content.sound = .default
/// let trigger = CalendarNotificationTrigger(dateMatching: DateComponents(hour: 7, minute: 0), repeats: true)
/// try await center.add(NotificationRequest(identifier: "alarm", content: content, trigger: trigger))
/// ```
///
/// A notification fires at its time even when the app is not running, exactly once, also across restarts of the
/// system. If the app is active in front it goes to the app (``UserNotificationCenterDelegate``); otherwise to the
/// user. The calls other than the delegate's may be made from any thread; the async ones do not hold up the main
/// actor.
@MainActor
public final class UserNotificationCenter {
    nonisolated private static let shared = UserNotificationCenter(link: DaemonLink.shared)

    /// The app's notification center.
    nonisolated public static func current() -> UserNotificationCenter { shared }

    /// Hears notifications that fire while the app is in front, and the user's responses. Held weakly, as on iOS:
    /// the app keeps it (the app's ``ApplicationDelegate``, which the ``Application`` keeps, is a good choice). Set
    /// it before `application(_:didFinishLaunchingWithOptions:)` returns; responses that come while there is none
    /// are kept and given to the first one set.
    public weak var delegate: (any UserNotificationCenterDelegate)? {
        didSet { deliverKept() }
    }

    nonisolated let link: DaemonLink
    /// Responses that came while there was no delegate, oldest first.
    var kept: [NotificationResponse] = []
    /// How many responses wait for a delegate at most.
    static let keptLimit = 16

    nonisolated init(link: DaemonLink) {
        self.link = link
    }

    /// Forgets the delegate and kept responses: a new process of the app starts (the test kit).
    func forgetProcess() {
        delegate = nil
        kept = []
    }

    // MARK: Authorization and settings

    /// Whether the user allows the app's notifications to be shown: there is no prompt on this system, so this is
    /// the user's per-app setting (on unless turned off with `offstage settings APP_ID notifications=off`).
    /// Notifications still fire when it is off: they reach the app in front and the delivered list, and are not shown.
    ///
    /// - Parameter options: what the app means to use; the setting covers all of them.
    /// - Throws: ``NotificationError`` with code `notRunning` or `unavailable` when the system cannot be asked.
    nonisolated public func requestAuthorization(options: AuthorizationOptions = []) async throws(NotificationError)
        -> Bool
    {
        try settingsNow().authorizationStatus == .authorized
    }

    /// What the user allows, the icon's badge and the device's time zone.
    nonisolated public func notificationSettings() async throws(NotificationError) -> NotificationSettings {
        try settingsNow()
    }

    // MARK: Pending requests

    /// Schedules a request, replacing a pending one with its identifier.
    ///
    /// At most 128 requests are pending per app (a setting): over that, the soonest are kept and the latest dropped.
    /// - Returns: the identifiers of the requests dropped to make room (usually none).
    /// - Throws: ``NotificationError`` — `invalidArgument` for a trigger, content or user info that is not
    ///   acceptable (a repeating interval under 60 s, nothing to show, a value JSON cannot hold), `tooManyPending` when
    ///   this request would be the one dropped (nothing changes), `notRunning` or `unavailable`.
    @discardableResult
    nonisolated public func add(_ request: NotificationRequest) async throws(NotificationError) -> [String] {
        try addNow(request)
    }

    /// The app's pending requests, soonest first.
    nonisolated public func pendingNotificationRequests() async throws(NotificationError) -> [NotificationRequest] {
        try pendingNow().map { NotificationRequest($0.request) }
    }

    /// Removes pending requests by identifier; unknown identifiers are ignored. A failure (no daemon) is written to
    /// standard error, as the call has no way to report it on iOS.
    nonisolated public func removePendingNotificationRequests(withIdentifiers identifiers: [String]) {
        perform("removePendingNotificationRequests", NotificationsInterface.Method.removePending, identifiers)
    }

    /// Removes every pending request of the app.
    nonisolated public func removeAllPendingNotificationRequests() {
        perform("removeAllPendingNotificationRequests", NotificationsInterface.Method.removePending, nil)
    }

    // MARK: Delivered notifications

    /// The app's notifications in the user's delivered list, oldest first.
    nonisolated public func deliveredNotifications() async throws(NotificationError) -> [UserNotification] {
        let reply = try call(
            NotificationsInterface.Method.delivered, NoParameters(), NotificationsInterface.DeliveredReply.self)
        return reply.delivered.map(UserNotification.init)
    }

    /// Removes delivered notifications by identifier (from the list and the desktop); unknown ones are ignored.
    nonisolated public func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {
        perform("removeDeliveredNotifications", NotificationsInterface.Method.removeDelivered, identifiers)
    }

    /// Removes every delivered notification of the app.
    nonisolated public func removeAllDeliveredNotifications() {
        perform("removeAllDeliveredNotifications", NotificationsInterface.Method.removeDelivered, nil)
    }

    // MARK: Badge and categories

    /// Sets the number on the app's icon; 0 removes it.
    nonisolated public func setBadgeCount(_ newBadgeCount: Int) async throws(NotificationError) {
        try setBadgeNow(newBadgeCount)
    }

    /// Replaces the app's notification categories (at most 64, of at most 10 actions each). A refusal is written to
    /// standard error.
    nonisolated public func setNotificationCategories(_ categories: Set<NotificationCategory>) {
        let parameters = NotificationsInterface.SetCategoriesParameters(
            categories: categories.sorted { $0.identifier < $1.identifier }.map(\.message))
        do throws(NotificationError) {
            _ = try call(NotificationsInterface.Method.setCategories, parameters, EmptyReply.self)
        } catch {
            reportToDeveloper("setNotificationCategories failed: \(error)")
        }
    }

    // MARK: Calls

    /// Adds `request` and waits for the daemon's answer.
    nonisolated func addNow(_ request: NotificationRequest) throws(NotificationError) -> [String] {
        let parameters = NotificationsInterface.AddParameters(request: try request.message(now: Date()))
        return try call(NotificationsInterface.Method.add, parameters, NotificationsInterface.AddReply.self).dropped
    }

    nonisolated func pendingNow() throws(NotificationError) -> [NotificationsInterface.PendingMessage] {
        try call(NotificationsInterface.Method.pending, NoParameters(), NotificationsInterface.PendingReply.self)
            .pending
    }

    nonisolated func settingsNow() throws(NotificationError) -> NotificationSettings {
        let reply = try call(
            NotificationsInterface.Method.settings, NoParameters(), NotificationsInterface.SettingsReply.self)
        return NotificationSettings(
            authorizationStatus: reply.allowed ? .authorized : .denied, badgeCount: reply.badge ?? 0,
            timeZoneIdentifier: reply.timeZone)
    }

    nonisolated func setBadgeNow(_ badge: Int) throws(NotificationError) {
        guard badge >= 0 else {
            throw NotificationError(
                .invalidArgument, "badge \(badge) is negative", fix: "use 0 to remove the badge, or a positive number")
        }
        let parameters = NotificationsInterface.SetBadgeParameters(badge: badge == 0 ? nil : badge)
        _ = try call(NotificationsInterface.Method.setBadge, parameters, EmptyReply.self)
    }

    /// Removes pending or delivered notifications (`identifiers` nil: all), and says on standard error if it failed.
    nonisolated private func perform(_ name: String, _ method: String, _ identifiers: [String]?) {
        do throws(NotificationError) {
            _ = try call(
                method, NotificationsInterface.IdentifiersParameters(identifiers: identifiers), EmptyReply.self)
        } catch {
            reportToDeveloper("\(name) failed: \(error)")
        }
    }

    nonisolated func call<Parameters: Encodable, Reply: Decodable>(
        _ method: String, _ parameters: Parameters, _ reply: Reply.Type
    ) throws(NotificationError) -> Reply {
        do {
            return try link.request(method, parameters, as: reply)
        } catch {
            throw NotificationError(error)
        }
    }
}
