import OffstageCore
import OffstageProtocol

/// `io.offstage.Notifications`: the calls an app's SDK makes for its local notifications (SPEC NT-1, NT-2). The app is
/// the one that owns the calling process (peer credentials), so it sees and changes only its own notifications.
struct NotificationsService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(NotificationsInterface.definition)
    }

    var methods: [String: VarlinkMethodHandler] {
        [
            "Add": { context, request, responder in
                let parameters = try request.decodeParameters(NotificationsInterface.AddParameters.self)
                let (id, pid) = try engine.requireApp(context, in: NotificationsInterface.name)
                let (dropped, actions) = try engine.notificationsCall { () throws(CoreError) in
                    try engine.core.addNotification(id, pid: pid, try parameters.request.request(), at: engine.now)
                }
                let due = engine.core.notifications.pending(id, identifier: parameters.request.identifier)?.due
                engine.apply(actions)
                responder.reply(NotificationsInterface.AddReply(due: due?.secondsSinceEpoch ?? 0, dropped: dropped))
            },
            "RemovePending": { context, request, responder in
                let parameters = try request.decodeParameters(NotificationsInterface.IdentifiersParameters.self)
                let (id, pid) = try engine.requireApp(context, in: NotificationsInterface.name)
                engine.apply(
                    try engine.notificationsCall { () throws(CoreError) in
                        try engine.core.removePendingNotifications(
                            id, pid: pid, identifiers: parameters.identifiers, at: engine.now)
                    })
                responder.reply()
            },
            "Pending": { context, _, responder in
                let (id, _) = try engine.requireApp(context, in: NotificationsInterface.name)
                let pending = engine.core.notifications.pending(of: id)
                responder.reply(NotificationsInterface.PendingReply(pending: pending.map(NotificationsInterface.PendingMessage.init)))
            },
            "Delivered": { context, _, responder in
                let (id, _) = try engine.requireApp(context, in: NotificationsInterface.name)
                let delivered = engine.core.notifications.delivered[id] ?? []
                responder.reply(
                    NotificationsInterface.DeliveredReply(delivered: delivered.map(NotificationsInterface.DeliveredMessage.init)))
            },
            "RemoveDelivered": { context, request, responder in
                let parameters = try request.decodeParameters(NotificationsInterface.IdentifiersParameters.self)
                let (id, pid) = try engine.requireApp(context, in: NotificationsInterface.name)
                engine.apply(
                    try engine.notificationsCall { () throws(CoreError) in
                        try engine.core.removeDeliveredNotifications(
                            id, pid: pid, identifiers: parameters.identifiers, at: engine.now)
                    })
                responder.reply()
            },
            "SetBadge": { context, request, responder in
                let parameters = try request.decodeParameters(NotificationsInterface.SetBadgeParameters.self)
                let (id, pid) = try engine.requireApp(context, in: NotificationsInterface.name)
                engine.apply(
                    try engine.notificationsCall { () throws(CoreError) in
                        try engine.core.setBadge(id, pid: pid, parameters.badge, at: engine.now)
                    })
                responder.reply()
            },
            "Settings": { context, _, responder in
                let (id, _) = try engine.requireApp(context, in: NotificationsInterface.name)
                responder.reply(
                    NotificationsInterface.SettingsReply(
                        allowed: engine.core.apps[id]?.app.settings.notifications ?? false,
                        badge: engine.core.notifications.badges[id], timeZone: engine.core.device.settings.timeZone))
            },
            "SetCategories": { context, request, responder in
                let parameters = try request.decodeParameters(NotificationsInterface.SetCategoriesParameters.self)
                let (id, pid) = try engine.requireApp(context, in: NotificationsInterface.name)
                engine.apply(
                    try engine.notificationsCall { () throws(CoreError) in
                        try engine.core.setNotificationCategories(
                            id, pid: pid, parameters.categories.map(\.category), at: engine.now)
                    })
                responder.reply()
            },
            "AnswerWillPresent": { context, request, responder in
                let parameters = try request.decodeParameters(NotificationsInterface.AnswerWillPresentParameters.self)
                let (id, pid) = try engine.requireApp(context, in: NotificationsInterface.name)
                // Beyond this the instant does not fit in 64 bits of nanoseconds; no due time is that far.
                try VarlinkError.checking { () throws(NumberOutOfRange) in
                    try CheckedNumber.instant(secondsSinceEpoch: parameters.due, field: "due")
                }
                let key = DeliveryKey(
                    app: id, identifier: parameters.identifier, due: NotificationsInterface.dueInstant(parameters.due))
                engine.apply(
                    try engine.notificationsCall { () throws(CoreError) in
                        try engine.core.answerWillPresent(
                            id, pid: pid, key: key, presentToUser: parameters.present, at: engine.now)
                    })
                responder.reply()
            },
        ]
    }
}

extension DaemonEngine {
    /// Runs a core call for an app's notifications, turning its error into one the notifications interface declares:
    /// the app's own mistakes keep their names; anything about its process is `AppNotRunning`.
    func notificationsCall<Result>(_ body: () throws(CoreError) -> Result) throws(VarlinkError) -> Result {
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
