import Foundation
import OffstageProtocol
import Synchronization

/// Remote (push) notifications, as on `UIApplication` (SPEC NT-3, NT-4).
///
/// Register at launch and hand the token to your server:
///
/// ```swift
/// func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
///     Task {
///         let registration = try await application.registerForRemoteNotifications()
///         await myServer.upload(token: registration.token)   // 64 hex digits
///     }
///     return true
/// }
/// ```
///
/// Or in UIKit's shape: call `registerForRemoteNotifications()` without `await` and implement
/// ``ApplicationDelegate/application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`` and
/// ``ApplicationDelegate/application(_:didFailToRegisterForRemoteNotificationsWithError:)``.
///
/// What a push does:
/// - **Background push** (`"aps": {"content-available": 1}`, push type `background`, priority 5): the system resumes
///   the app, or launches it into the background with ``LaunchReason/push``, and calls
///   ``ApplicationDelegate/application(_:didReceiveRemoteNotification:)`` with the payload as user info. The handler
///   has 30 s; its result (new data, no data, failed) teaches the system how useful the app's wakes are. The app needs
///   the `remote-notification` background mode in its manifest (`UIBackgroundModes`). Background pushes are budgeted
///   per app: over the budget they are held and the newest is delivered later.
/// - **Alert push** (`"aps": {"alert": …, "sound": …, "badge": …}`): shown like a local notification, with nothing
///   new to write. It reaches ``UserNotificationCenterDelegate/userNotificationCenter(_:willPresent:)`` when the app
///   is in front, else the user, and ``UserNotificationCenter/deliveredNotifications()`` lists it. Its
///   `request.identifier` is the push's `apns-collapse-id`, else its `apns-id`; its `content.userInfo` is the whole
///   payload, `aps` included (`userInfo["aps"] as? [String: any Sendable]`, numbers as `Int`). A tap reaches
///   ``UserNotificationCenterDelegate/userNotificationCenter(_:didReceive:)`` as for a local notification.
/// - A push with both wakes the app and shows the alert.
extension Application {
    /// Registers the app for remote notifications and returns its device token and where its server sends pushes.
    ///
    /// The token is the app's on this device until it is uninstalled or it calls
    /// `unregisterForRemoteNotifications()`: registering again (at every launch, as on iOS) returns the same
    /// one. An alert push needs no background mode; a background push wakes only an app that declares
    /// `remote-notification`.
    ///
    /// - Throws: ``RemoteNotificationError`` — `unavailable` when the daemon runs without a push gateway or cannot be
    ///   reached, `notRunning` when the process is not an installed app the daemon launched.
    nonisolated public func registerForRemoteNotifications() async throws(RemoteNotificationError)
        -> RemoteNotificationRegistration
    {
        try RemoteNotificationRegistration.register(link: link)
    }

    /// Registers the app for remote notifications in UIKit's shape: returns at once, then calls the delegate's
    /// ``ApplicationDelegate/application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`` with the token's 32
    /// bytes, or ``ApplicationDelegate/application(_:didFailToRegisterForRemoteNotificationsWithError:)`` with a
    /// ``RemoteNotificationError``, on the main actor. In async code, `try await registerForRemoteNotifications()`
    /// returns the ``RemoteNotificationRegistration`` instead, with the gateway's address.
    nonisolated public func registerForRemoteNotifications() {
        let link = link
        Task.detached {
            let outcome: Result<RemoteNotificationRegistration, RemoteNotificationError>
            do throws(RemoteNotificationError) {
                outcome = .success(try RemoteNotificationRegistration.register(link: link))
            } catch {
                outcome = .failure(error)
            }
            await MainActor.run {
                let application = Application.shared
                switch outcome {
                case .success(let registration):
                    application.delegate?.application(
                        application, didRegisterForRemoteNotificationsWithDeviceToken: Data(registration.deviceToken))
                case .failure(let error):
                    if let delegate = application.delegate {
                        delegate.application(application, didFailToRegisterForRemoteNotificationsWithError: error)
                    } else {
                        reportToDeveloper("registerForRemoteNotifications failed: \(error)")
                    }
                }
            }
        }
    }

    /// Revokes the app's device token: the gateway answers pushes to it with 410 `Unregistered` from now on, so the
    /// app's server learns to stop sending. Registering again gives a new token.
    ///
    /// - Throws: ``RemoteNotificationError`` — `unavailable` or `notRunning`, as for registering.
    nonisolated public func unregisterForRemoteNotifications() async throws(RemoteNotificationError) {
        try link.unregisterForRemoteNotifications()
        RemoteNotificationState.shared.unregistered()
    }

    /// Revokes the app's device token in UIKit's shape: returns when done; a failure is written to standard error (the
    /// async form throws it instead).
    nonisolated public func unregisterForRemoteNotifications() {
        do throws(RemoteNotificationError) {
            try link.unregisterForRemoteNotifications()
            RemoteNotificationState.shared.unregistered()
        } catch {
            reportToDeveloper("unregisterForRemoteNotifications failed: \(error)")
        }
    }

    /// Whether this process registered for remote notifications (and has not unregistered since), as on iOS. The
    /// token itself outlives the process: register again at each launch to get it.
    nonisolated public var isRegisteredForRemoteNotifications: Bool {
        RemoteNotificationState.shared.registration != nil
    }

    /// The daemon's `remoteNotification` callback, on the main actor.
    func receiveRemoteNotification(_ callback: AppInterface.CallbackMessage) {
        RemoteNotificationDispatch.shared.receive(callback, application: self, delegate: delegate)
    }
}

/// What the handler's user info holds besides the payload, and how to read the payload's `aps` dictionary.
///
/// ```swift
/// func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable])
///     async -> BackgroundFetchResult
/// {
///     guard let message = userInfo["message"] as? String else { return .noData }
///     let push = userInfo[RemoteNotification.apnsIDKey] as? String
///     …
/// }
/// ```
public enum RemoteNotification {
    /// The key under which the remote-notification handler's user info holds the push's `apns-id` (the id the
    /// server's `offstage push` or APNs client printed), beside the payload's own keys. A payload key of that name is
    /// replaced. Alert pushes in the delivered list carry their id as the notification's identifier instead (unless
    /// they have a collapse id).
    public static let apnsIDKey = "offstage.apnsID"

    /// The payload's `aps` dictionary, if it has one.
    public static func aps(in userInfo: [String: any Sendable]) -> [String: any Sendable]? {
        userInfo["aps"] as? [String: any Sendable]
    }

    /// Whether the payload asks to wake the app in the background: `"aps": {"content-available": 1}`.
    public static func isContentAvailable(_ userInfo: [String: any Sendable]) -> Bool {
        aps(in: userInfo)?["content-available"] as? Int == 1
    }
}

/// What this process registered, for ``Application/isRegisteredForRemoteNotifications``.
final class RemoteNotificationState: Sendable {
    static let shared = RemoteNotificationState()
    private let state = Mutex<RemoteNotificationRegistration?>(nil)

    var registration: RemoteNotificationRegistration? { state.withLock { $0 } }

    /// Forgets the registration: a new process of the app starts (the test kit).
    func forgetProcess() { state.withLock { $0 = nil } }
    func registered(_ registration: RemoteNotificationRegistration) { state.withLock { $0 = registration } }
    func unregistered() { state.withLock { $0 = nil } }
}
