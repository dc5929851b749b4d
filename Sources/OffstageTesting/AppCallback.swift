import Offstage
import OffstageCore

/// A callback the system gave the app under test, in the order the app received them (``TestApp/callbacks``).
public enum AppCallback: Hashable, Sendable, CustomStringConvertible {
    /// `application(_:didFinishLaunchingWithOptions:)`, with why the app was launched.
    case didFinishLaunching(Offstage.LaunchReason)
    case willEnterForeground
    case didBecomeActive
    case willResignActive
    case didEnterBackground
    case willTerminate
    /// The background time of the app's open background tasks is running out: their expiration handlers run.
    case backgroundTimeExpiring
    /// A scheduled task's launch handler runs (a refresh, processing or continued-processing task), by identifier.
    case runTask(String)
    /// The legacy background fetch (`application(_:performFetchWithCompletionHandler:)`).
    case performFetch
    /// A running task's time is up: its expiration handler runs.
    case taskExpiring
    /// `applicationDidReceiveMemoryWarning(_:)`.
    case memoryWarning
    /// Any other callback, by its name on the wire (`remoteNotification`, `transferEvents`, `locations` …).
    case other(String)

    init(_ callback: Callback) {
        switch callback.kind {
        case .didFinishLaunching(let reason):
            self = .didFinishLaunching(Offstage.LaunchReason(rawValue: reason.rawValue) ?? .user)
        case .willEnterForeground: self = .willEnterForeground
        case .didBecomeActive: self = .didBecomeActive
        case .willResignActive: self = .willResignActive
        case .didEnterBackground: self = .didEnterBackground
        case .willTerminate: self = .willTerminate
        case .backgroundTasksExpiring: self = .backgroundTimeExpiring
        case .runTask(_, let identifier, _, _): self = .runTask(identifier)
        case .performFetch: self = .performFetch
        case .taskExpiring: self = .taskExpiring
        case .memoryWarning: self = .memoryWarning
        default: self = .other(callback.kind.name)
        }
    }

    /// Whether it is one of the lifecycle transitions (launch, foreground, background, terminate).
    public var isLifecycle: Bool {
        switch self {
        case .didFinishLaunching, .willEnterForeground, .didBecomeActive, .willResignActive, .didEnterBackground,
            .willTerminate:
            true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .didFinishLaunching(let reason): "didFinishLaunching(\(reason.rawValue))"
        case .willEnterForeground: "willEnterForeground"
        case .didBecomeActive: "didBecomeActive"
        case .willResignActive: "willResignActive"
        case .didEnterBackground: "didEnterBackground"
        case .willTerminate: "willTerminate"
        case .backgroundTimeExpiring: "backgroundTimeExpiring"
        case .runTask(let identifier): "runTask(\(identifier))"
        case .performFetch: "performFetch"
        case .taskExpiring: "taskExpiring"
        case .memoryWarning: "memoryWarning"
        case .other(let name): name
        }
    }
}
