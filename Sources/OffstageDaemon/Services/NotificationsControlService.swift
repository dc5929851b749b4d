import OffstageCore
import OffstageProtocol

/// `io.offstage.NotificationsControl`: what the user may do with the apps' local notifications (SPEC NT-2, CLI-2):
/// list them, tap them, clear them. A process that belongs to an app is refused.
struct NotificationsControlService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(NotificationsControlInterface.definition)
    }

    var methods: [String: VarlinkMethodHandler] {
        [
            "Notifications": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(NotificationsControlInterface.NotificationsParameters.self)
                let id = try parameters.app.map { text throws(VarlinkError) in try engine.installedApp(text) }
                responder.reply(NotificationsControlInterface.NotificationsListing(engine.core.notifications, app: id))
            },
            "Tap": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(NotificationsControlInterface.TapParameters.self)
                let id = try engine.installedApp(parameters.app)
                let action = parameters.action ?? NotificationResponse.defaultAction
                // As `offstage open` does: the core refuses a locked device or an app being uninstalled.
                engine.apply(
                    try engine.notificationsControlCall { () throws(CoreError) in
                        try engine.core.respondToNotification(
                            id, identifier: parameters.identifier, action: action, at: engine.now)
                    })
                responder.reply()
            },
            "Clear": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(NotificationsControlInterface.ClearParameters.self)
                let removed = try engine.clearDelivered(app: parameters.app, identifiers: parameters.identifiers)
                responder.reply(NotificationsControlInterface.ClearReply(removed: removed))
            },
        ]
    }
}

extension DaemonEngine {
    /// Runs a core call for the user's notification commands, turning its error into one the interface declares.
    func notificationsControlCall<Result>(_ body: () throws(CoreError) -> Result) throws(VarlinkError) -> Result {
        do {
            return try body()
        } catch {
            switch error.code {
            case .appNotInstalled, .noSuchNotification, .deviceLocked, .invalidArgument:
                throw error.varlink(in: NotificationsControlInterface.name)
            default:
                // Nothing else is declared: an app that cannot be acted on now is, to the user, not a valid target.
                throw CoreError(.invalidArgument, error.message, fix: error.fix).varlink(in: NotificationsControlInterface.name)
            }
        }
    }

    /// The installed app `text` names, or `InvalidArgument` (not an app id) or `AppNotInstalled`.
    func installedApp(_ text: String, in interface: String = NotificationsControlInterface.name) throws(VarlinkError) -> AppID {
        guard let id = AppID.validated(text) else {
            throw CoreError(
                .invalidArgument, "\(QuotedText.quote(text)) is not an app id",
                fix: "use the CFBundleIdentifier, e.g. com.example.alarm (see `offstage apps`)"
            ).varlink(in: interface)
        }
        guard core.apps[id] != nil else {
            throw CoreError.notInstalled(id).varlink(in: interface)
        }
        return id
    }

    /// `offstage notifications clear`: the core removes the app's delivered notifications with these identifiers
    /// (every one must be delivered, or nothing is removed), all of the app's, or every app's; returns how many went.
    func clearDelivered(app: String?, identifiers: [String]?) throws(VarlinkError) -> Int {
        let id = try app.map { text throws(VarlinkError) in try installedApp(text) }
        let (removed, actions) = try notificationsControlCall { () throws(CoreError) in
            try core.clearDeliveredNotifications(id, identifiers: identifiers, at: now)
        }
        apply(actions)
        return removed
    }
}
