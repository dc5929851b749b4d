import Dispatch
import Foundation
import Synchronization

/// Schedules background work that the system runs later by launching or resuming the app, as `BGTaskScheduler`.
///
/// Register a launch handler for each identifier the manifest lists in `BGTaskSchedulerPermittedIdentifiers`
/// before `application(_:didFinishLaunchingWithOptions:)` returns, then submit requests. When the system decides
/// to run one, it resumes the app or launches it into the background and calls the handler on the main actor
/// with a ``BackgroundTask``.
///
/// ```swift
/// func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
///     TaskScheduler.shared.register(forTaskWithIdentifier: "com.example.refresh", using: nil) { task in
///         self.handleAppRefresh(task as! AppRefreshTask)
///     }
///     return true
/// }
///
/// func scheduleAppRefresh() {
///     let request = AppRefreshTaskRequest(identifier: "com.example.refresh")
///     request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
///     do { try TaskScheduler.shared.submit(request) } catch { print("could not schedule: \(error)") }
/// }
/// ```
///
/// Every method is safe to call from any thread.
public final class TaskScheduler: Sendable {
    /// A launch handler: called on the main actor with each run of its identifier. It should return quickly; the
    /// run lasts until the task is completed.
    public typealias LaunchHandler = @MainActor @Sendable (BackgroundTask) -> Void

    /// The scheduler of the process.
    public static let shared = TaskScheduler()

    struct State {
        var handlers: [String: LaunchHandler] = [:]
        /// Set once did-finish-launching has returned: registering is then too late (SPEC SCH-1).
        var launchFinished = false
        /// Runs started and not yet completed, by the daemon's run number.
        var runs: [UInt64: ScheduledRun] = [:]
    }

    /// A run the SDK is waiting for the app to complete.
    enum ScheduledRun: Sendable {
        case task(BackgroundTask)
        case fetch(FetchRun)
    }

    let state = Mutex(State())
    var link: DaemonLink { DaemonLink.shared }

    private init() {}

    /// Forgets handlers and runs: a new process of the app starts (the test kit).
    func forgetProcess() { state.withLock { $0 = State() } }

    // MARK: Registering

    /// Registers the launch handler for the tasks with `identifier` (SPEC SCH-1), as on `BGTaskScheduler`.
    ///
    /// Call it before `application(_:didFinishLaunchingWithOptions:)` returns, once per identifier, for every
    /// identifier the app submits requests for. The identifier must be listed in the manifest's
    /// `BGTaskSchedulerPermittedIdentifiers`.
    ///
    /// - Parameters:
    ///   - identifier: The task identifier, e.g. `com.example.refresh`.
    ///   - queue: Accepted for source compatibility with `BGTaskScheduler` and ignored: launch handlers always run
    ///     on the main actor (on iOS, nil means a background queue).
    ///   - launchHandler: Called on the main actor with each run; hand the work off and return quickly.
    /// - Returns: Whether the handler was registered. It is false, with one line on standard error naming the
    ///   identifier and the fix, when launch has already finished, when the identifier already has a handler, or
    ///   when the manifest does not list it.
    @discardableResult
    public func register(
        forTaskWithIdentifier identifier: String, using queue: DispatchQueue?,
        launchHandler: @escaping LaunchHandler
    ) -> Bool {
        let call = "register(forTaskWithIdentifier: \"\(identifier)\")"
        if let problem = registrationProblem(identifier) {
            reportToDeveloper("\(call) returned false: \(problem)")
            return false
        }
        switch link.registerTask(identifier) {
        case .permitted:
            break
        case .refused(let error):
            reportToDeveloper("\(call) returned false: \(error.message); fix: \(error.fix)")
            return false
        case .unverified(let reason):
            // Only the daemon runs tasks, and it checks the manifest again on every submit.
            reportToDeveloper("\(call): the daemon could not check the identifier (\(reason)); registered anyway")
        }
        let problem: String? = state.withLock { state in
            if let problem = Self.registrationProblem(identifier, state) { return problem }
            state.handlers[identifier] = launchHandler
            return nil
        }
        if let problem {
            reportToDeveloper("\(call) returned false: \(problem)")
            return false
        }
        return true
    }

    /// Registers an async launch handler: each run calls `work` in a new Swift task and completes with the result
    /// it returns, or ``BackgroundTaskResult/failed`` if it throws. When the run's time runs out the Swift task is
    /// cancelled and the run completed as failed at once, after any expiration handler `work` set. An Offstage
    /// addition in the spirit of SwiftUI's `.backgroundTask` modifier.
    ///
    /// ```swift
    /// TaskScheduler.shared.register(forTaskWithIdentifier: "com.example.refresh") { task in
    ///     try await feed.refresh() ? .newData : .noData
    /// }
    /// ```
    ///
    /// See ``register(forTaskWithIdentifier:using:launchHandler:)`` for when to call it and what false means.
    @discardableResult
    public func register(
        forTaskWithIdentifier identifier: String,
        perform work: @escaping @MainActor @Sendable (BackgroundTask) async throws -> BackgroundTaskResult
    ) -> Bool {
        register(forTaskWithIdentifier: identifier, using: nil) { task in
            let running = Task { @MainActor in
                let result: BackgroundTaskResult
                do { result = try await work(task) } catch { result = .failed }
                task.setTaskCompleted(result: result)
            }
            task.setExpirationHook {
                running.cancel()
                task.setTaskCompleted(result: .failed)
            }
        }
    }

    private func registrationProblem(_ identifier: String) -> String? {
        state.withLock { Self.registrationProblem(identifier, $0) }
    }

    private static func registrationProblem(_ identifier: String, _ state: State) -> String? {
        if state.launchFinished {
            return "launch handlers must be registered before application(_:didFinishLaunchingWithOptions:) "
                + "returns; register '\(identifier)' there (or earlier)"
        }
        if state.handlers[identifier] != nil {
            return "a launch handler for '\(identifier)' is already registered; register each identifier once"
        }
        return nil
    }

    // MARK: Requests

    /// Submits a request; a pending request with the same identifier is replaced (SPEC SCH-2).
    ///
    /// - Throws: ``Error`` with code ``Error/Code/unavailable`` (background refresh off, low power mode, no
    ///   daemon), ``Error/Code/tooManyPendingTaskRequests``, ``Error/Code/notPermitted`` (mode not declared or
    ///   identifier not listed) or ``Error/Code/invalidArgument``; its description carries the daemon's message
    ///   and fix.
    public func submit(_ taskRequest: TaskRequest) throws(Error) {
        try link.submitTask(taskRequest.message)
    }

    /// Cancels the pending request with `identifier`; cancelling one that is not pending is harmless. A run
    /// already started is not affected.
    public func cancel(taskRequestWithIdentifier identifier: String) {
        _ = link.cancelTask(identifier)
    }

    /// Cancels every pending request of the app.
    public func cancelAllTaskRequests() {
        link.cancelAllTasks()
    }

    /// The app's pending requests, sorted by identifier; empty (with a line on standard error) when the daemon
    /// cannot be asked.
    public func pendingTaskRequests() async -> [TaskRequest] {
        await withCheckedContinuation { continuation in
            getPendingTaskRequests { continuation.resume(returning: $0) }
        }
    }

    /// The app's pending requests, passed to `completionHandler` on a background queue, as on `BGTaskScheduler`.
    public func getPendingTaskRequests(completionHandler: @escaping @Sendable ([TaskRequest]) -> Void) {
        // The call blocks on the socket: keep it off the main actor and the cooperative pool.
        DispatchQueue.global().async { [link] in
            completionHandler(link.pendingTasks().compactMap(TaskRequest.from))
        }
    }
}
