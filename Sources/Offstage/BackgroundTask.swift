import Synchronization

/// One run of scheduled background work, handed to the launch handler registered with
/// ``TaskScheduler/register(forTaskWithIdentifier:using:launchHandler:)``, as `BGTask`.
///
/// The run is an ``AppRefreshTask`` or a ``ProcessingTask``. Do the work, then call
/// ``setTaskCompleted(success:)`` (or ``setTaskCompleted(result:)``) from any thread; until then the app keeps
/// running in the background. Set ``expirationHandler`` to stop the work when its time runs out: the handler is
/// called once, on the main actor, and the app must then complete the task promptly or be terminated.
///
/// Completing twice, or after the expiration handler, is harmless: only the first completion counts.
public class BackgroundTask: @unchecked Sendable, CustomStringConvertible {
    // Sendable by hand: the only mutable state is behind `state`'s lock.

    /// The identifier the launch handler was registered for.
    public let identifier: String

    /// The daemon's number for this run, which `CompleteTask` names.
    let run: UInt64
    private let state = Mutex(State())

    private struct State {
        var expirationHandler: (@MainActor @Sendable () -> Void)?
        /// The SDK's own reaction to expiration, after the app's handler (the async launch handler's cancellation).
        var expirationHook: (@MainActor @Sendable () -> Void)?
        var completed = false
        var expired = false
    }

    init(identifier: String, run: UInt64) {
        self.identifier = identifier
        self.run = run
    }

    /// Called once, on the main actor, shortly before the task's time runs out. Stop the work there and complete
    /// the task (usually with `success: false`). With no handler set, the SDK completes the task as failed itself
    /// when the time runs out, so that the app is not terminated.
    public var expirationHandler: (@MainActor @Sendable () -> Void)? {
        get { state.withLock { $0.expirationHandler } }
        set { state.withLock { $0.expirationHandler = newValue } }
    }

    /// Tells the system the work is done: `success` true reports new data, false a failure. Safe from any thread;
    /// only the first completion counts.
    public func setTaskCompleted(success: Bool) {
        setTaskCompleted(result: success ? .newData : .failed)
    }

    /// Tells the system the work is done, with the result the scheduler learns from: an Offstage extension that
    /// lets an app report that it checked and found nothing new (``BackgroundTaskResult/noData``), so that it is
    /// woken less often. Safe from any thread; only the first completion counts.
    public func setTaskCompleted(result: BackgroundTaskResult) {
        let first = state.withLock { state in
            guard !state.completed else { return false }
            state.completed = true
            state.expirationHandler = nil
            state.expirationHook = nil
            return true
        }
        guard first else { return }
        willComplete()
        TaskScheduler.shared.runEnded(run)
        DaemonLink.shared.completeTask(run: run, result: result)
    }

    /// Called once, right before the completion goes to the daemon: a subclass sends what must arrive first.
    func willComplete() {}

    /// Sets what the SDK itself does when the run expires, after the app's expiration handler.
    func setExpirationHook(_ hook: @escaping @MainActor @Sendable () -> Void) {
        state.withLock { $0.expirationHook = hook }
    }

    /// The run's time is running out: calls the expiration handler once, or completes the task as failed when
    /// there is none.
    @MainActor
    func expire() {
        typealias Handler = @MainActor @Sendable () -> Void
        let due: (handler: Handler?, hook: Handler?)? = state.withLock { state in
            guard !state.completed, !state.expired else { return nil }
            state.expired = true
            defer {
                state.expirationHandler = nil
                state.expirationHook = nil
            }
            return (state.expirationHandler, state.expirationHook)
        }
        guard let (handler, hook) = due else { return }
        if handler == nil, hook == nil {
            reportToDeveloper(
                "task '\(identifier)' ran out of time and has no expirationHandler: completing it as failed; "
                    + "set task.expirationHandler to stop the work and call setTaskCompleted(success: false)")
            setTaskCompleted(result: .failed)
            return
        }
        handler?()
        hook?()
    }

    /// The type and the identifier, e.g. `AppRefreshTask("com.example.refresh")`.
    public var description: String { "\(type(of: self))(\"\(identifier)\")" }
}
