import COffstageSystem
import Dispatch
import Synchronization

/// A serial queue of jobs on a thread of its own, by default at a low priority (nice 10: about a tenth of the CPU of a
/// normal thread when they compete). It stands in for a serial `DispatchQueue`: once anything runs on libdispatch's
/// queues, its workqueue monitor wakes the process every second for as long as it lives (§11: an idle daemon wakes
/// 0 times), and a semaphore and a thread of its own cost no wake-up while idle.
///
/// At nice 10, for work that must not slow what the user waits on: reading an app's counters at each
/// transition takes netlink requests and file reads, and its memory a walk of its page tables, and on a device with two
/// cores they would otherwise compete with the transition itself (the daemon's loop, the app, the freeze). Not SCHED_IDLE: that
/// starves the thread behind any busy process (a build at nice 19 held a usage query for 38 s), and a user waits on
/// some of its jobs too. Where the priority cannot be set, the thread runs at normal priority and says so in
/// ``lowered``.
final class SerialWorker: Sendable {
    private final class Shared: Sendable {
        let jobs = Mutex<(waiting: [@Sendable () -> Void], later: [(at: DispatchTime, job: @Sendable () -> Void)], stopping: Bool)>(
            ([], [], false))
        let wake = DispatchSemaphore(value: 0)
        let lowered = Mutex<Bool?>(nil)
        let started = DispatchSemaphore(value: 0)
    }

    private let shared = Shared()
    private let thread: Mutex<WatcherThread?>

    /// Whether the thread's priority was lowered.
    var lowered: Bool { shared.lowered.withLock { $0 } ?? false }

    /// Starts the thread, called `name` (at most 15 bytes), at nice `nice`.
    init(name: String, nice: Int32 = 10) throws {
        let shared = shared
        thread = Mutex(try WatcherThread(name: name) {
            shared.lowered.withLock { $0 = offstage_set_thread_nice(nice) == 0 }
            shared.started.signal()
            while true {
                // With jobs for later, the wait ends at the first of them; without, only a job or `stop()` ends it.
                let next = shared.jobs.withLock { $0.later.map(\.at).min() }
                if let next { _ = shared.wake.wait(timeout: next) } else { shared.wake.wait() }
                let (jobs, stopping) = shared.jobs.withLock { state in
                    let now = DispatchTime.now()
                    let due = state.later.filter { $0.at <= now }.map(\.job)
                    state.later.removeAll { $0.at <= now }
                    defer { state.waiting = [] }
                    return (state.waiting + due, state.stopping)
                }
                for job in jobs { job() }
                if stopping { return }
            }
        })
        shared.started.wait()
    }

    deinit { stop() }

    /// Runs `job` on the worker's thread, after every job handed over before it; returns at once, false when the
    /// worker has stopped (the job is dropped).
    @discardableResult
    func async(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted = shared.jobs.withLock { state in
            guard !state.stopping else { return false }
            state.waiting.append(job)
            return true
        }
        if accepted { shared.wake.signal() }
        return accepted
    }

    /// Runs `job` on the worker's thread once `delay` has passed (after the jobs due before it); returns at once, false
    /// when the worker has stopped. A job for later still waiting when the worker stops is dropped.
    @discardableResult
    func async(after delay: Duration, _ job: @escaping @Sendable () -> Void) -> Bool {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let at = DispatchTime(uptimeNanoseconds: DispatchTime.now().uptimeNanoseconds &+ UInt64(clamping: nanoseconds))
        let accepted = shared.jobs.withLock { state in
            guard !state.stopping else { return false }
            state.later.append((at, job))
            return true
        }
        // The thread recomputes its wait.
        if accepted { shared.wake.signal() }
        return accepted
    }

    /// Runs `job` on the worker's thread after every job handed over before it, and waits for it.
    func sync<Result: Sendable>(_ job: @escaping @Sendable () -> Result) -> Result {
        let result = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        let accepted = async {
            result.withLock { $0 = job() }
            done.signal()
        }
        // A stopped worker runs nothing more: the job runs here instead.
        guard accepted else { return job() }
        done.wait()
        return result.withLock { $0 }!
    }

    /// Runs the jobs already handed over, then ends the thread. Later jobs are dropped (`sync` runs its own on the
    /// caller's thread).
    func stop() {
        let first = shared.jobs.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        shared.wake.signal()
        if let thread = thread.withLock({ $0.take() }), !thread.isCurrent { thread.join() }
    }
}
