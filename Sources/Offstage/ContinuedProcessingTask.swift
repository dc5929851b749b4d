import Dispatch
import OffstageProtocol
import Synchronization

/// A run of a ``ContinuedProcessingTaskRequest``, as `BGContinuedProcessingTask` (SPEC SCH-11): work the user
/// started, which goes on in the background while the app reports its ``progress``.
///
/// Report progress as the work goes on: a task that reports nothing for a while (60 s by default) is expired, and
/// under pressure (low power mode, a low battery) the system ends first the task that reports the least progress.
/// The user can cancel the task; every way it ends early calls the ``expirationHandler``: stop the work there and call
/// ``setTaskCompleted(success:)``.
public final class ContinuedProcessingTask: BackgroundTask, @unchecked Sendable {
    /// The units of work done and in all, as `Progress` on the platform. Setting either reports to the system.
    public let progress: TaskProgress
    private let labels: Mutex<(title: String, subtitle: String)>

    init(identifier: String, run: UInt64, title: String?, subtitle: String?) {
        labels = Mutex((title ?? identifier, subtitle ?? ""))
        progress = TaskProgress(run: run)
        super.init(identifier: identifier, run: run)
    }

    /// The title the user sees.
    public var title: String { labels.withLock { $0.title } }

    /// The subtitle the user sees.
    public var subtitle: String { labels.withLock { $0.subtitle } }

    /// The progress still waiting out the throttle goes first: the completion is recorded with the final count.
    override func willComplete() { progress.flush() }

    /// Changes what the user sees, e.g. as the work moves on to another album.
    public func updateTitle(_ title: String, subtitle: String) {
        labels.withLock { $0 = (title, subtitle) }
        progress.report(title: title, subtitle: subtitle)
    }
}

/// The progress of a ``ContinuedProcessingTask``: units done out of units in all, as Foundation's `Progress` is used
/// on the platform. Setting ``completedUnitCount`` or ``totalUnitCount`` tells the system, from any thread; reports
/// go out in order off the caller's thread, at most about four a second, and the last value always goes out.
public final class TaskProgress: @unchecked Sendable {
    // Sendable by hand: the mutable state is behind `state`'s lock.
    private struct State {
        var completed: Int64 = 0
        var total: Int64 = 0
        var title: String?
        var subtitle: String?
        var lastSent: ContinuousClock.Instant?
        var sendScheduled = false
        /// Something changed since the last report.
        var changed = false
    }

    private let run: UInt64
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "offstage.task-progress")
    /// The shortest time between two reports.
    static let interval = Duration.milliseconds(250)

    init(run: UInt64) { self.run = run }

    /// Units done. Negative values are reported as 0.
    public var completedUnitCount: Int64 {
        get { state.withLock { $0.completed } }
        set {
            state.withLock {
                $0.completed = max(0, newValue)
                $0.changed = true
            }
            scheduleReport()
        }
    }

    /// Units in all; 0 while unknown. Negative values are reported as 0.
    public var totalUnitCount: Int64 {
        get { state.withLock { $0.total } }
        set {
            state.withLock {
                $0.total = max(0, newValue)
                $0.changed = true
            }
            scheduleReport()
        }
    }

    /// The fraction done, 0...1; 0 while the total is unknown.
    public var fractionCompleted: Double {
        state.withLock { $0.total > 0 ? min(1, Double($0.completed) / Double($0.total)) : 0 }
    }

    func report(title: String, subtitle: String) {
        state.withLock {
            $0.title = title
            $0.subtitle = subtitle
            $0.changed = true
        }
        scheduleReport()
    }

    /// Sends now if the last report is old enough, else once it is; changes made meanwhile ride along.
    private func scheduleReport() {
        let delay: Duration? = state.withLock { state in
            guard !state.sendScheduled else { return nil }
            state.sendScheduled = true
            guard let last = state.lastSent else { return .zero }
            let since = ContinuousClock.now - last
            return since >= Self.interval ? .zero : Self.interval - since
        }
        guard let delay else { return }
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in send() }
    }

    /// Sends what changed since the last report now, before the task's completion: on the reports' own queue, after any
    /// report already on its way, so the daemon never gets an older count after a newer one.
    func flush() {
        queue.sync { send() }
    }

    private func send() {
        // A report still on its way when the task completed says nothing any more.
        guard TaskScheduler.shared.isRunning(run) else { return }
        let parameters: AppInterface.ProgressParameters? = state.withLock { state in
            state.sendScheduled = false
            guard state.changed else { return nil }
            state.changed = false
            state.lastSent = ContinuousClock.now
            defer {
                state.title = nil
                state.subtitle = nil
            }
            return AppInterface.ProgressParameters(
                run: run, completed: state.completed, total: state.total, title: state.title, subtitle: state.subtitle)
        }
        if let parameters { DaemonLink.shared.reportTaskProgress(parameters) }
    }
}
