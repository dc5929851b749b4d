import Foundation

/// The methods an app implements to take part in its lifecycle, as on iOS (SPEC LC-2).
///
/// Every method runs on the main actor, one at a time, in the order the system sends them. Each must return
/// promptly: did-finish-launching within 20 s of launch, did-enter-background and will-terminate within 5 s,
/// or the system terminates the app and records why. All methods have empty default implementations.
@MainActor
public protocol ApplicationDelegate: AnyObject {
    /// The app finished launching, for the reason in `options`. A launch for a background event is not
    /// followed by ``applicationDidBecomeActive(_:)``.
    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool
    /// The app became active: it is in front and receives events.
    func applicationDidBecomeActive(_ application: Application)
    /// The app is about to become inactive: the user is leaving, or an interruption arrived.
    func applicationWillResignActive(_ application: Application)
    /// The app is now in the background. Save state here (``DurableStore``): a suspended app may be
    /// terminated without any further callback. Begin a background task to finish work.
    func applicationDidEnterBackground(_ application: Application)
    /// The app is about to come back to the foreground.
    func applicationWillEnterForeground(_ application: Application)
    /// The app is about to be terminated while running. The process exits when this returns.
    func applicationWillTerminate(_ application: Application)
    /// The clock was set or the time zone changed (`applicationSignificantTimeChange(_:)`); a suspended app hears it
    /// when it runs again, before anything else. Also posted as ``Application/significantTimeChangeNotification``.
    func applicationSignificantTimeChange(_ application: Application)
    /// Memory is short on the device (`applicationDidReceiveMemoryWarning(_:)`, SPEC MEM-1): release what can be
    /// rebuilt — caches, decoded images, views off screen — and return promptly (within 5 s). If memory stays short
    /// the system ends apps without a callback, suspended ones first, least recently used first; an app that freed
    /// memory is less likely to be among them. Only a running app gets it: a suspended one is not woken for it. Also
    /// posted as ``Application/didReceiveMemoryWarningNotification``.
    func applicationDidReceiveMemoryWarning(_ application: Application)
    /// The system launched or resumed the app in the background to fetch new content (the legacy background
    /// fetch, SPEC SCH-4; see ``Application/setMinimumBackgroundFetchInterval(_:)``).
    ///
    /// Start the download and return; call `completionHandler` once, from any thread, within about 30 s, with
    /// ``BackgroundFetchResult/newData``, ``BackgroundFetchResult/noData`` or ``BackgroundFetchResult/failed``.
    /// The scheduler fetches less often for apps that report no data or fail. A later call is ignored; if it is
    /// never called in time the SDK completes the fetch with `.failed` (with a line on standard error) rather than
    /// let the app be terminated.
    ///
    /// Implement this method or ``applicationPerformFetch(_:)``, not both: the default implementation calls
    /// the async method. Note the closure is `@Sendable`: a declaration without it does not implement this
    /// requirement.
    func application(
        _ application: Application,
        performFetchWithCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void)
    /// The async form of ``application(_:performFetchWithCompletionHandler:)``: return the fetch's result. If the
    /// fetch's time runs out first, the task running this method is cancelled and the fetch completed as `.failed`.
    ///
    /// The default implementation, for an app that implements neither form, returns `.noData` at once and writes a
    /// line to standard error: the app asked for fetches (or declared `fetch`) without handling them.
    func applicationPerformFetch(_ application: Application) async -> BackgroundFetchResult

    // Remote notifications (SPEC NT-3, NT-4; defaults in ApplicationDelegate+RemoteNotifications.swift).

    /// `registerForRemoteNotifications()` (called without `await`) succeeded: `deviceToken` is the token's 32 bytes;
    /// send them, as 64 hex digits, to the app's server.
    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)
    /// `registerForRemoteNotifications()` (called without `await`) failed with a ``RemoteNotificationError``. The
    /// default writes it to standard error.
    func application(_ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error)
    /// A background push (`content-available: 1`) woke the app: `userInfo` is its whole payload (and its `apns-id`
    /// under ``RemoteNotification/apnsIDKey``). Fetch what it announces and call `completionHandler` once, from any
    /// thread, within 30 s; a later call is ignored, and a run not completed in time is completed as `.failed` (with a
    /// line on standard error) rather than let the app be terminated.
    ///
    /// Implement this method or the async ``application(_:didReceiveRemoteNotification:)``, not both: the default
    /// implementation calls the async one. The closure must be `@Sendable` to implement this requirement.
    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable],
        fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void)
    /// The async form of the remote-notification handler: return `.newData`, `.noData` or `.failed`. A thrown error
    /// completes the push as `.failed`; if the 30 s run out first, the task running this method is cancelled and the
    /// push completed as `.failed`. It may be declared without `throws`. The default returns `.noData`.
    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable]
    ) async throws -> BackgroundFetchResult

    // Background transfers (SPEC TR-3; default in ApplicationDelegate+Transfers.swift).

    /// The system woke the app — resumed it, or launched it into the background with
    /// ``LaunchReason/transferEvents`` — because every task of the background session `identifier` has finished
    /// (the platform's `application(_:handleEventsForBackgroundURLSession:completionHandler:)`).
    ///
    /// Keep `completionHandler`, create the ``BackgroundSession`` with this identifier (or keep the one the app has
    /// open), and call the handler from the session delegate's
    /// ``BackgroundSessionDelegate/urlSessionDidFinishEvents(forBackgroundURLSession:)``, once the events are handled:
    /// it tells the daemon the app may be suspended again. It may be called from any thread; later calls are ignored.
    /// An app that never calls it is not terminated, but is no longer kept running for it after 30 s. The default
    /// calls it at once.
    func application(
        _ application: Application, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping @Sendable () -> Void)
}

extension ApplicationDelegate {
    public func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        true
    }
    public func applicationDidBecomeActive(_ application: Application) {}
    public func applicationWillResignActive(_ application: Application) {}
    public func applicationDidEnterBackground(_ application: Application) {}
    public func applicationWillEnterForeground(_ application: Application) {}
    public func applicationWillTerminate(_ application: Application) {}
    public func applicationSignificantTimeChange(_ application: Application) {}
    public func applicationDidReceiveMemoryWarning(_ application: Application) {}
}

/// Why the app was launched, handed to `application(_:didFinishLaunchingWithOptions:)`.
public struct LaunchOptions: Sendable, Hashable {
    /// The reason.
    public var reason: LaunchReason

    /// Creates launch options.
    public init(reason: LaunchReason) { self.reason = reason }
}

/// Why the app's process was started.
public enum LaunchReason: String, Sendable, Hashable, CaseIterable {
    /// The user opened the app.
    case user
    /// An app-refresh task is due.
    case refresh
    /// A processing task is due.
    case processing
    /// A continued-processing task the user started got its slot after the app was terminated: the app is launched
    /// into the background to run it (``ContinuedProcessingTask``).
    case continuedProcessing = "continued-processing"
    /// The legacy background fetch.
    case fetch
    /// A background push arrived.
    case push
    /// The app's background transfers finished.
    case transferEvents = "transfer-events"
    /// A significant location change.
    case location
    /// VoIP keep-alive or incoming data on its socket.
    case voip
    /// An accessory event.
    case accessory
    /// The system started.
    case boot
    /// The user tapped one of the app's notifications (or chose an action that opens the app): the launch is to the
    /// foreground, and the response reaches the ``UserNotificationCenterDelegate`` right after did-finish-launching.
    case notification
    /// The user chose an action of one of the app's notifications that the app handles in the background; the
    /// response reaches the ``UserNotificationCenterDelegate`` right after did-finish-launching.
    case notificationAction = "notification-action"

    /// Whether a launch for this reason happens in the background.
    public var isBackground: Bool { self != .user && self != .notification }
}
