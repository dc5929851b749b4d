import Foundation
import Offstage
import OffstageCore
import OffstageSimulator

/// The app under test on a ``TestDevice``: what the system did to it and what its code received.
@MainActor
public final class TestApp {
    /// The bundle identifier.
    public let id: String
    let appID: AppID
    unowned let device: TestDevice

    /// Every callback the app's code received, in order, across all its processes.
    public private(set) var callbacks: [AppCallback] = []
    /// Why each of the app's processes was launched, in order.
    public private(set) var launches: [Offstage.LaunchReason] = []
    /// How each of the app's processes ended, in order (`exited(0)`, `killed by signal 9` …).
    public private(set) var exits: [String] = []

    init(id: AppID, device: TestDevice) {
        self.appID = id
        self.id = id.rawValue
        self.device = device
    }

    func received(_ callback: AppCallback) { callbacks.append(callback) }
    func launched(_ reason: Offstage.LaunchReason) { launches.append(reason) }
    func exited(_ status: String) { exits.append(status) }

    /// The lifecycle callbacks only (launch, foreground, background, terminate), in order.
    public var lifecycleCallbacks: [AppCallback] { callbacks.filter(\.isLifecycle) }

    /// Forgets the callbacks received so far, so that the next assertions read only what comes after.
    public func clearCallbacks() { callbacks = [] }

    // MARK: State

    /// The app's state as the system sees it.
    public enum State: String, Sendable, Hashable {
        /// No process.
        case notRunning
        /// In front, not receiving events (launching, or covered by an interruption).
        case inactive
        /// In front and receiving events.
        case active
        /// Running in the background.
        case background
        /// In the background, frozen: none of its code runs.
        case suspended
    }

    /// The app's state now.
    public var state: State {
        let core = device.host.with { $0.simulation.state(of: appID) }
        return State(rawValue: core.rawValue) ?? .notRunning
    }

    /// Whether a process of the app runs (in any state but not running).
    public var isRunning: Bool { state != .notRunning }

    /// How much the app running now matters to the user when memory is short (SPEC MEM-1), as `offstage apps` shows
    /// it: `foreground`, `background-user` (audio, location, a continued task the user started), `background-work` (a
    /// task, a scheduled run, a handler, the grace before suspension) or `suspended`; nil when it is not running.
    public var memoryBand: String? {
        device.host.with { $0.simulation.core.memoryBand(of: appID, at: $0.simulation.now)?.rawValue }
    }

    /// Whether the app is suspended now.
    public var isSuspended: Bool { state == .suspended }

    /// Whether the app was ever suspended on this device.
    public var wasSuspended: Bool {
        device.host.with { $0.simulation.trace(of: appID).contains { $0.event == .frozen } }
    }

    /// The delegate of the app's running process (made by the factory given at install), if it runs.
    public var delegate: (any ApplicationDelegate)? { isRunning ? Application.shared.delegate : nil }

    // MARK: Background time

    /// How many finite-length background tasks the app holds open now.
    public var openBackgroundTasks: Int { status?.backgroundTasks ?? 0 }

    /// Seconds of background time the app has left now; nil in the foreground or when it does not run.
    public var backgroundTimeRemaining: Double? {
        guard let remaining = status?.backgroundTimeRemaining, remaining < .greatestFiniteMagnitude else { return nil }
        return remaining
    }

    /// Why the app's last process ended, as `offstage apps` says it (`ended: background time expired …`); nil
    /// when none has ended.
    public var lastTermination: String? { status?.lastTermination?.summary }

    private var status: AppStatus? { device.host.with { $0.simulation.status(of: appID) } }

    // MARK: Scheduled work

    /// Why each of the app's scheduled requests (or the one with `identifier`) runs when it does — what
    /// `offstage explain` prints (SPEC SCH-8).
    ///
    /// - Throws: ``TestKitError/refused(message:fix:)`` for an identifier the app does not list or has no request
    ///   for.
    public func explain(_ identifier: String? = nil) throws -> [TaskExplanation] {
        let appID = appID
        return try device.host.with { state in
            try refusing {
                try state.simulation.core.explain(appID, identifier: identifier, at: state.simulation.now)
                    .map(TaskExplanation.init)
            }
        }
    }

    /// Runs the pending request `identifier` now, whatever its conditions — `offstage run-task`.
    public func runTaskNow(_ identifier: String) async throws {
        try await debug { core, now throws(CoreError) in try core.runTaskNow(self.appID, identifier: identifier, at: now) }
    }

    /// Expires the running task `identifier` now: its expiration handler runs — `offstage expire-task`.
    public func expireTaskNow(_ identifier: String) async throws {
        try await debug { core, now throws(CoreError) in try core.expireTaskNow(self.appID, identifier: identifier, at: now) }
    }

    /// Performs the legacy background fetch now — `offstage fetch`.
    public func fetchNow() async throws {
        try await debug { core, now throws(CoreError) in try core.fetchNow(self.appID, at: now) }
    }

    private func debug(_ action: (inout OffstageCore, Instant) throws(CoreError) -> [CoreAction]) async throws {
        try device.host.with { state in
            let now = state.simulation.now
            try refusing { try state.simulation.callCore { core in ((), try action(&core, now)) } }
        }
        try await device.runUntilIdle()
    }

    /// Changes the user's settings for the app, as `offstage settings` does; each left out stays as it is.
    public func setSettings(
        backgroundRefresh: Bool? = nil, backgroundData: Bool? = nil, unrestrictedData: Bool? = nil,
        notifications: Bool? = nil
    ) async throws {
        let appID = appID
        try device.host.with { state in
            let now = state.simulation.now
            try refusing {
                guard var settings = state.simulation.core.apps[appID]?.app.settings else {
                    throw TestKitError.invalidArgument("'\(appID)' is not installed")
                }
                if let backgroundRefresh { settings.backgroundRefresh = backgroundRefresh }
                if let backgroundData { settings.backgroundData = backgroundData }
                if let unrestrictedData { settings.unrestrictedData = unrestrictedData }
                if let notifications { settings.notifications = notifications }
                try state.simulation.callCore { core in ((), try core.setAppSettings(settings, for: appID, at: now)) }
            }
        }
        try await device.runUntilIdle()
    }

    /// The system's event log lines about this app, oldest first.
    public var log: [String] {
        device.host.with { state in state.simulation.log.filter { $0.app == appID }.map(\.message) }
    }

    /// The system's event log about this app with each line's time and kind, oldest first, as `offstage log --app`
    /// gives it: `callback` lines name each callback (`will-resign-active`), `launch`, `taskRun`, `taskDone`, `exit`,
    /// `kill` … say what the system did.
    public var events: [LoggedEvent] {
        device.host.with { state in
            state.simulation.log.filter { $0.app == appID }.map {
                LoggedEvent(at: Date(timeIntervalSince1970: $0.at.secondsSinceEpoch), kind: $0.kind.rawValue, message: $0.message)
            }
        }
    }
}

/// One line of the system's event log (``TestApp/events``).
public struct LoggedEvent: Sendable, Hashable, CustomStringConvertible {
    /// When it happened, on the device's clock.
    public var at: Date
    /// What kind of event: `callback`, `launch`, `exit`, `kill`, `taskRun`, `taskDone` … (`offstage log`'s kinds).
    public var kind: String
    /// The line itself.
    public var message: String

    public var description: String { "\(kind): \(message)" }
}

/// Why one scheduled request runs when it does (SPEC SCH-8).
public struct TaskExplanation: Sendable, Hashable, CustomStringConvertible {
    /// The request's identifier.
    public var identifier: String
    /// `refresh`, `processing`, `fetch` or `continued`.
    public var kind: String
    /// Whether it runs now.
    public var isRunning: Bool
    /// What holds it back now, one line each (empty when it may run).
    public var holds: [String]
    /// The controller behind each hold (`time-window`, `power`, `data` …), as `offstage explain --json` names them.
    public var controllers: [String]
    /// One line for people: why it runs when it runs.
    public var summary: String

    init(_ status: TaskStatus) {
        identifier = status.identifier
        kind = status.kind.rawValue
        isRunning = status.run != nil
        holds = status.holds.map { "\($0)" }
        controllers = status.holds.map(\.controller)
        summary = status.summary
    }

    public var description: String { "\(identifier) (\(kind)): \(summary)" }
}
