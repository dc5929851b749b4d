import COffstageSystem
import Dispatch
import Foundation
import Synchronization
import OffstageProtocol

/// The app's connection to the system: its state, its lifecycle callbacks and its background time, as
/// `UIApplication` on iOS.
///
/// Start an app with ``main(delegate:)``; it attaches to the Offstage daemon and delivers every lifecycle
/// callback to the delegate on the main actor, and also as a `NotificationCenter` notification and on
/// ``lifecycleEvents``.
///
/// ```swift
/// @main
/// struct MyApp {
///     @MainActor static func main() { Application.main(delegate: MyDelegate()) }
/// }
/// ```
@MainActor
public final class Application {
    /// The one application object of the process.
    nonisolated public static let shared = Application()

    /// The delegate that receives lifecycle callbacks. The application keeps it alive.
    public var delegate: (any ApplicationDelegate)?

    /// The app's state, as the system last told it.
    public private(set) var applicationState: State = .inactive

    /// Why the process was launched; nil until did-finish-launching.
    public private(set) var launchReason: LaunchReason?

    nonisolated var link: DaemonLink { DaemonLink.shared }
    private var subscribers: [UUID: AsyncStream<LifecycleEvent>.Continuation] = [:]

    private nonisolated init() {}

    /// Forgets the delegate and state: a new process of the app starts (the test kit). Observers of
    /// ``lifecycleEvents`` see their sequence end, as they would with the process.
    func forgetProcess() {
        delegate = nil
        applicationState = .inactive
        launchReason = nil
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }

    /// Attaches to the daemon and runs the main loop; never returns. The process ends when the system
    /// terminates it (after ``ApplicationDelegate/applicationWillTerminate(_:)``) or when the app calls `exit`.
    public static func main(delegate: any ApplicationDelegate) -> Never {
        SignalMask.unblockAll()
        offstage_line_buffer_output()
        let application = Application.shared
        application.delegate = delegate
        application.link.start()
        // Players tell the daemon when they play, so a playing app keeps running in the background (SPEC MODE-1).
        AudioSession.shared.observePlayers()
        // Callbacks are read and handled on the main thread itself, in the order they arrived.
        MainLoop.run(link: application.link) { callback in application.handle(callback) }
    }

    // MARK: Background tasks (SPEC BT)

    /// Begins a finite-length background task: while one is open the app keeps running in the background
    /// instead of being suspended. Call ``endBackgroundTask(_:)`` when the work is done. Shortly before the
    /// background time runs out, `expirationHandler` is called once on the main actor; end the task there.
    ///
    /// Safe to call from any thread. Returns ``BackgroundTaskIdentifier/invalid`` when the background time is
    /// already spent or the daemon cannot be reached.
    nonisolated public func beginBackgroundTask(
        withName name: String? = nil, expirationHandler: (@MainActor @Sendable () -> Void)? = nil
    ) -> BackgroundTaskIdentifier {
        link.beginBackgroundTask(name: name ?? "", expirationHandler: expirationHandler)
    }

    /// Begins a finite-length background task without a name. See ``beginBackgroundTask(withName:expirationHandler:)``.
    nonisolated public func beginBackgroundTask(
        expirationHandler: (@MainActor @Sendable () -> Void)?
    ) -> BackgroundTaskIdentifier {
        beginBackgroundTask(withName: nil, expirationHandler: expirationHandler)
    }

    /// Ends a background task. Ending ``BackgroundTaskIdentifier/invalid``, an unknown or an already ended task
    /// is harmless. Safe to call from any thread.
    nonisolated public func endBackgroundTask(_ identifier: BackgroundTaskIdentifier) {
        link.endBackgroundTask(identifier)
    }

    /// Seconds of background time left. In the foreground, the largest finite value
    /// (`Double.greatestFiniteMagnitude`); in the background, what is left of the budget all tasks share.
    nonisolated public var backgroundTimeRemaining: TimeInterval {
        link.backgroundTimeRemaining()
    }

    /// Runs `body` as a background task: begun before, ended after, even if it throws. If the background time
    /// runs out, the task that runs `body` is cancelled (check `Task.isCancelled` or use cancellable calls).
    nonisolated public func withBackgroundTask<Result: Sendable>(
        named name: String, _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let work = Task { try await body() }
        let identifier = beginBackgroundTask(withName: name) { work.cancel() }
        defer { endBackgroundTask(identifier) }
        return try await work.value
    }

    // MARK: Bundle

    /// The app's installed bundle folder, where the resources it shipped beside its executable are (the daemon
    /// installs a copy of the bundle; this is that copy). Falls back to the executable's folder for an app started
    /// by hand.
    nonisolated public static var bundleURL: URL {
        if let bundle = inProcessBundle.withLock({ $0 }) { return bundle }
        if let path = ProcessInfo.processInfo.environment["OFFSTAGE_BUNDLE_DIR"], !path.isEmpty {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// The bundle folder of an app whose daemon runs in its own process (the test kit), which sets no environment.
    nonisolated static let inProcessBundle = Mutex<URL?>(nil)

    /// Whether the app runs with its daemon in its own process (the test kit) rather than against `offstaged`.
    nonisolated static var runsInProcess: Bool { inProcessBundle.withLock { $0 != nil } }

    // MARK: Device

    /// Whether the device supports multitasking. When it does not, apps never run in the background: leaving
    /// the foreground terminates them (after will-terminate).
    nonisolated public var isMultitaskingSupported: Bool { link.isMultitaskingSupported() }

    // MARK: Observing

    /// Every lifecycle event from now on, as an async sequence (in addition to the delegate and the
    /// `NotificationCenter` notifications).
    public var lifecycleEvents: AsyncStream<LifecycleEvent> {
        let (stream, continuation) = AsyncStream<LifecycleEvent>.makeStream()
        let key = UUID()
        subscribers[key] = continuation
        continuation.onTermination = { _ in
            Task { @MainActor in Application.shared.subscribers[key] = nil }
        }
        return stream
    }

    // MARK: Callbacks

    func handle(_ callback: AppInterface.CallbackMessage) {
        guard link.firstDelivery(of: callback.id) else {
            link.callbackDone(callback.id)
            return
        }
        switch callback.kind {
        case "didFinishLaunching":
            let reason = callback.launchReason.flatMap(LaunchReason.init(rawValue:)) ?? .user
            launchReason = reason
            applicationState = reason.isBackground ? .background : .inactive
            _ = delegate?.application(self, didFinishLaunchingWithOptions: LaunchOptions(reason: reason))
            TaskScheduler.shared.launchFinished()
            link.launchCompleted(state: applicationState.rawValue)
            publish(.didFinishLaunching(reason), Self.didFinishLaunchingNotification)
        case "didBecomeActive":
            applicationState = .active
            link.stateChanged(applicationState.rawValue)
            delegate?.applicationDidBecomeActive(self)
            publish(.didBecomeActive, Self.didBecomeActiveNotification)
        case "willResignActive":
            delegate?.applicationWillResignActive(self)
            applicationState = .inactive
            link.stateChanged(applicationState.rawValue)
            publish(.willResignActive, Self.willResignActiveNotification)
        case "didEnterBackground":
            applicationState = .background
            link.stateChanged(applicationState.rawValue)
            delegate?.applicationDidEnterBackground(self)
            publish(.didEnterBackground, Self.didEnterBackgroundNotification)
        case "willEnterForeground":
            delegate?.applicationWillEnterForeground(self)
            applicationState = .inactive
            link.stateChanged(applicationState.rawValue)
            publish(.willEnterForeground, Self.willEnterForegroundNotification)
        case "willTerminate":
            delegate?.applicationWillTerminate(self)
            publish(.willTerminate, Self.willTerminateNotification)
            link.callbackDone(callback.id)
            link.endProcess(status: 0)
            return
        case "backgroundTasksExpiring":
            for id in callback.taskIds ?? [] {
                link.takeExpirationHandler(BackgroundTaskIdentifier(rawValue: id))?()
            }
        case "runTask", "performFetch", "taskExpiring":
            handleScheduledWork(callback)
        case "remoteNotification":
            receiveRemoteNotification(callback)
        case "transferEvents":
            // Answered first: the work (the app's handler, fetching the session's tasks) does not hold the daemon up.
            link.callbackDone(callback.id)
            receiveTransferEvents(callback)
            return
        case "systemEvent":
            if let event = callback.systemEvent.flatMap(SystemEvent.init(rawValue:)) { systemEventArrived(event) }
        case "keepAlive", "voipSocket":
            handleVoIP(callback)
        case "locations":
            LocationDispatch.shared.deliver(callback.locations ?? [])
        case "locationError":
            LocationDispatch.shared.sourceFailed(callback.locationError ?? "the location source failed")
        case "accessory":
            // Answered below, once the delegate's method returned: the daemon's watchdog waits for that answer.
            AccessoryManager.shared.handle(callback)
        case "notificationWillPresent", "notificationResponse":
            // The delegate's methods are async: the center answers the callback once they have returned.
            UserNotificationCenter.current().handle(callback)
            return
        case "memoryWarning":
            delegate?.applicationDidReceiveMemoryWarning(self)
            publish(.didReceiveMemoryWarning, Self.didReceiveMemoryWarningNotification)
        case "audioInterruption":
            if let event = callback.audioInterruption {
                AudioSession.shared.handleInterruption(began: event.began, shouldResume: event.shouldResume, reason: event.reason)
            }
        default:
            // A newer daemon may send kinds this SDK does not know: answer so it is not held up.
            break
        }
        link.callbackDone(callback.id)
    }

    private func publish(_ event: LifecycleEvent, _ name: Notification.Name) {
        NotificationCenter.default.post(name: name, object: nil)
        for continuation in subscribers.values { continuation.yield(event) }
    }
}

extension Application {
    /// Posted after did-finish-launching.
    public static let didFinishLaunchingNotification = Notification.Name("OffstageApplicationDidFinishLaunching")
    /// Posted after did-become-active.
    public static let didBecomeActiveNotification = Notification.Name("OffstageApplicationDidBecomeActive")
    /// Posted after will-resign-active.
    public static let willResignActiveNotification = Notification.Name("OffstageApplicationWillResignActive")
    /// Posted after did-enter-background.
    public static let didEnterBackgroundNotification = Notification.Name("OffstageApplicationDidEnterBackground")
    /// Posted after will-enter-foreground.
    public static let willEnterForegroundNotification = Notification.Name("OffstageApplicationWillEnterForeground")
    /// Posted after will-terminate, just before the process exits.
    public static let willTerminateNotification = Notification.Name("OffstageApplicationWillTerminate")
    /// Posted after ``ApplicationDelegate/applicationDidReceiveMemoryWarning(_:)`` returns (the platform's
    /// `didReceiveMemoryWarningNotification`): any part of the app holding a cache can observe it.
    public static let didReceiveMemoryWarningNotification = Notification.Name("OffstageApplicationDidReceiveMemoryWarning")
}
