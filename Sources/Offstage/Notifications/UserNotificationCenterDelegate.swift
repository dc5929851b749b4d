/// What the ``UserNotificationCenter`` tells the app about its notifications, as `UNUserNotificationCenterDelegate`
/// (SPEC NT-2).
///
/// Set the delegate in `application(_:didFinishLaunchingWithOptions:)`: an app launched because the user tapped one of
/// its notifications (launch reason ``LaunchReason/notification``) hears the response right after that method
/// returns. Methods run on the main actor; the system waits for each to return (at most about 5 s, a setting) before
/// it tells the app anything else. Both have default implementations.
@MainActor
public protocol UserNotificationCenterDelegate: AnyObject {
    /// A notification fired while the app is active in front: by default it goes to the app only. Return
    /// ``NotificationPresentationOptions/banner`` or ``NotificationPresentationOptions/list`` to show it to the user
    /// as well (in the desktop's notifications and the delivered list). The default returns `[]`.
    func userNotificationCenter(
        _ center: UserNotificationCenter, willPresent notification: UserNotification
    ) async -> NotificationPresentationOptions

    /// The user tapped a notification of the app (``NotificationResponse/defaultActionIdentifier``), dismissed it
    /// (``NotificationResponse/dismissActionIdentifier``), or chose one of its category's actions. The default does
    /// nothing.
    func userNotificationCenter(_ center: UserNotificationCenter, didReceive response: NotificationResponse) async
}

extension UserNotificationCenterDelegate {
    /// Keeps the notification with the app: returns `[]`.
    public func userNotificationCenter(
        _ center: UserNotificationCenter, willPresent notification: UserNotification
    ) async -> NotificationPresentationOptions {
        []
    }

    /// Does nothing.
    public func userNotificationCenter(_ center: UserNotificationCenter, didReceive response: NotificationResponse)
        async
    {}
}
