import OffstageCore
import OffstageProtocol

/// The calls of `io.offstage.Notifications` (SPEC NT-1, NT-2), answered the same way by every shell: each only asks
/// or tells the core, for the calling app's own notifications.
public enum NotificationCalls {
    /// The methods answered here, unqualified.
    public static let methods: Set<String> = [
        "Add", "RemovePending", "Pending", "Delivered", "RemoveDelivered", "SetBadge", "Settings", "SetCategories",
        "AnswerWillPresent",
    ]

    /// Answers `method` (one of ``methods``) for `caller` at `now`.
    ///
    /// - Throws: `org.varlink.service.InvalidParameter` for parameters that do not decode or are out of range,
    ///   `io.offstage.Notifications.<Code>` for what the core refused (``notificationsCall(_:)``).
    public static func answer(
        _ method: String, _ call: VarlinkReceivedCall, caller: AppCaller, core: inout OffstageCore, at now: Instant
    ) throws(VarlinkError) -> HostAnswer {
        let (id, pid) = (caller.app, caller.pid)
        switch method {
        case "Add":
            let parameters = try call.decodeParameters(as: NotificationsInterface.AddParameters.self)
            let (dropped, actions) = try notificationsCall { () throws(CoreError) in
                try core.addNotification(id, pid: pid, try parameters.request.request(), at: now)
            }
            let due = core.notifications.pending(id, identifier: parameters.request.identifier)?.due
            return HostAnswer(
                reply: NotificationsInterface.AddReply(due: due?.secondsSinceEpoch ?? 0, dropped: dropped), actions: actions)
        case "RemovePending":
            let parameters = try call.decodeParameters(as: NotificationsInterface.IdentifiersParameters.self)
            return HostAnswer(
                actions: try notificationsCall { () throws(CoreError) in
                    try core.removePendingNotifications(id, pid: pid, identifiers: parameters.identifiers, at: now)
                })
        case "Pending":
            let pending = core.notifications.pending(of: id)
            return HostAnswer(
                reply: NotificationsInterface.PendingReply(pending: pending.map(NotificationsInterface.PendingMessage.init)))
        case "Delivered":
            let delivered = core.notifications.delivered[id] ?? []
            return HostAnswer(
                reply: NotificationsInterface.DeliveredReply(
                    delivered: delivered.map(NotificationsInterface.DeliveredMessage.init)))
        case "RemoveDelivered":
            let parameters = try call.decodeParameters(as: NotificationsInterface.IdentifiersParameters.self)
            return HostAnswer(
                actions: try notificationsCall { () throws(CoreError) in
                    try core.removeDeliveredNotifications(id, pid: pid, identifiers: parameters.identifiers, at: now)
                })
        case "SetBadge":
            let parameters = try call.decodeParameters(as: NotificationsInterface.SetBadgeParameters.self)
            return HostAnswer(
                actions: try notificationsCall { () throws(CoreError) in
                    try core.setBadge(id, pid: pid, parameters.badge, at: now)
                })
        case "Settings":
            return HostAnswer(
                reply: NotificationsInterface.SettingsReply(
                    allowed: core.apps[id]?.app.settings.notifications ?? false, badge: core.notifications.badges[id],
                    timeZone: core.device.settings.timeZone))
        case "SetCategories":
            let parameters = try call.decodeParameters(as: NotificationsInterface.SetCategoriesParameters.self)
            return HostAnswer(
                actions: try notificationsCall { () throws(CoreError) in
                    try core.setNotificationCategories(id, pid: pid, parameters.categories.map(\.category), at: now)
                })
        case "AnswerWillPresent":
            let parameters = try call.decodeParameters(as: NotificationsInterface.AnswerWillPresentParameters.self)
            // Beyond this the instant does not fit in 64 bits of nanoseconds; no due time is that far.
            try VarlinkError.checking { () throws(NumberOutOfRange) in
                try CheckedNumber.instant(secondsSinceEpoch: parameters.due, field: "due")
            }
            let key = DeliveryKey(
                app: id, identifier: parameters.identifier, due: NotificationsInterface.dueInstant(parameters.due))
            return HostAnswer(
                actions: try notificationsCall { () throws(CoreError) in
                    try core.answerWillPresent(id, pid: pid, key: key, presentToUser: parameters.present, at: now)
                })
        default:
            throw VarlinkError.methodNotFound("\(NotificationsInterface.name).\(method)")
        }
    }

    /// Runs a core call for an app's notifications, turning its error into one the notifications interface declares:
    /// the app's own mistakes keep their names; anything about its process is `AppNotRunning`.
    public static func notificationsCall<Result>(_ body: () throws(CoreError) -> Result) throws(VarlinkError) -> Result {
        do {
            return try body()
        } catch {
            switch error.code {
            case .tooManyPendingRequests, .noSuchNotification, .invalidArgument:
                throw error.varlink(in: NotificationsInterface.name)
            default:
                throw CoreError(.appNotRunning, error.message, fix: error.fix).varlink(in: NotificationsInterface.name)
            }
        }
    }
}
