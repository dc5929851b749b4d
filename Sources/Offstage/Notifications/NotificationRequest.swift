import Foundation

/// A local notification to schedule, as `UNNotificationRequest` (SPEC NT-1): an identifier, what it shows, and when.
///
/// ```swift
/// let trigger = CalendarNotificationTrigger(dateMatching: DateComponents(hour: 7, minute: 0), repeats: true)
/// let request = NotificationRequest(identifier: "alarm", content: content, trigger: trigger)
/// try await UserNotificationCenter.current().add(request)
/// ```
public struct NotificationRequest: Sendable {
    /// The app's name for it (1 to 256 bytes): adding a request with the identifier of a pending one replaces it, and
    /// removing, listing and responses name it.
    public let identifier: String
    /// What it shows.
    public let content: NotificationContent
    /// When it fires; nil fires it at once.
    public let trigger: (any NotificationTrigger)?

    /// A request. With no trigger the notification fires as soon as it is added.
    public init(identifier: String, content: NotificationContent, trigger: (any NotificationTrigger)?) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
    }
}

/// A notification that fired, as `UNNotification`: the request it came from and when it was delivered.
public struct UserNotification: Sendable {
    /// When it was delivered.
    public let date: Date
    /// The request it came from.
    public let request: NotificationRequest
    /// When it was due; later than ``date`` only if the system was down at that time. The pair names this firing of
    /// a repeating request.
    public let dueDate: Date

    /// A notification delivered at `date` for `request`, due at `dueDate` (by default the same as `date`).
    public init(date: Date, request: NotificationRequest, dueDate: Date? = nil) {
        self.date = date
        self.request = request
        self.dueDate = dueDate ?? date
    }
}

/// What the user did with a delivered notification, as `UNNotificationResponse`: tapped it, dismissed it, or chose one
/// of its category's actions.
public struct NotificationResponse: Sendable {
    /// The action identifier of a tap on the notification itself, which opens the app
    /// (`UNNotificationDefaultActionIdentifier`).
    public static let defaultActionIdentifier = "default"
    /// The action identifier of a dismissal (`UNNotificationDismissActionIdentifier`).
    public static let dismissActionIdentifier = "dismiss"

    /// The notification.
    public let notification: UserNotification
    /// ``defaultActionIdentifier``, ``dismissActionIdentifier``, or the identifier of a ``NotificationAction`` of the
    /// notification's category.
    public let actionIdentifier: String

    /// A response with `actionIdentifier` to `notification`.
    public init(notification: UserNotification, actionIdentifier: String) {
        self.notification = notification
        self.actionIdentifier = actionIdentifier
    }
}
