/// What the notification schedule asks the shell to do, in order: persist first, then act (SPEC NT-2 exactly once).
public enum NotificationAction: Hashable, Sendable {
    /// Store a pending request: added, replaced, or given a new due time (a time zone change).
    case savePending(AppID, PendingNotification)
    /// Delete these pending requests of the app.
    case removePending(AppID, identifiers: [String])
    /// One firing, in one transaction: insert the delivery record (ignored if its key is already there) unless the
    /// notification was suppressed, and store the request's next occurrence or delete the request when there is none.
    /// Whatever the firing causes (a desktop notification, a will-present callback) comes after this.
    case fire(DeliveryKey, delivery: DeliveredNotification?, next: PendingNotification?)
    /// Show the delivered notification on the desktop, if there is one; at most once per key, so a restart that asks
    /// again shows nothing new.
    case show(DeliveredNotification)
    /// The delivery record changed (the app's will-present handler passed it on to the user).
    case updateDelivery(DeliveredNotification)
    /// Delete these delivery records and withdraw them from the desktop.
    case removeDelivered(AppID, keys: [DeliveryKey])
    /// Store the number on the app's icon (nil: none).
    case saveBadge(AppID, Int?)
    /// Store the app's categories.
    case saveCategories(AppID, [NotificationCategory])
    /// The app is uninstalled: delete every notification row it had and withdraw its desktop notifications.
    case forgetApp(AppID)
}

extension NotificationAction {
    /// The action's name, for logs and traces: `savePending`, `fire` …
    public var kindName: String {
        switch self {
        case .savePending: "savePending"
        case .removePending: "removePending"
        case .fire: "fire"
        case .show: "show"
        case .updateDelivery: "updateDelivery"
        case .removeDelivered: "removeDelivered"
        case .saveBadge: "saveBadge"
        case .saveCategories: "saveCategories"
        case .forgetApp: "forgetApp"
        }
    }
}
