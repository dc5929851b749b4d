import COffstageSystem
import Glibc
import Synchronization

#if canImport(OffstageCore)
    // Inside the daemon, exits are reported with the core's `ExitStatus`; a standalone build of this layer uses its own
    // (ExitStatus.swift), which has the same cases.
    import OffstageCore
#endif

/// Observes process exits and hands each `(pid, ExitStatus)` to a handler.
///
/// Two kinds of process are watched:
/// - non-children (`watch(pid:)`, apps adopted after a daemon restart): a pidfd in an epoll set; the kernel does
///   not tell a non-parent how a process ended, so the status is `.unknown`;
/// - children: in `.reapAllChildren` mode a thread blocks in `waitid(P_ALL)` and reaps every child, including
///   orphaned grandchildren the daemon adopted as child subreaper; in `.ownChildrenOnly` mode each child
///   announced with `childAdded(pid:)` gets a pidfd and is reaped through it alone, leaving other code's children
///   (Foundation.Process) to their owners.
///
/// Nothing wakes up while nothing exits: both threads block in the kernel. The handler runs on one of the
/// watcher's threads, one call at a time; it should hand the event on quickly and must not call `shutdown()`.
/// Call `shutdown()` to stop the threads; until then they keep the watcher alive.
public final class ExitWatcher: Sendable {
    /// Which children the watcher reaps.
    public enum Mode: Sendable, Hashable {
        /// Reap every child of the process (the daemon, which is child subreaper for its apps' orphans).
        case reapAllChildren
        /// Reap only children announced with `childAdded(pid:)` (processes where other code has children too).
        case ownChildrenOnly
    }

    /// Receives each exit.
    public typealias Handler = @Sendable (_ pid: Int32, _ status: ExitStatus) -> Void

    /// The mode chosen at creation.
    public let mode: Mode

    private struct Watch {
        let pid: Int32
        let fd: Int32
    }

    private struct State {
        var watches: [UInt64: Watch] = [:]
        var tokenByPid: [Int32: UInt64] = [:]
        // 0 is the wake-up eventfd.
        var nextToken: UInt64 = 1
        // Bumped by childAdded, so a reaper that found no children knows when to look again.
        var childGeneration: UInt64 = 0
        var reaperWaiting = false
        var stopping = false
        var descriptorsClosed = false
        // The throwaway child that wakes the reaper out of waitid at shutdown; never reported.
        var wakeChild: Int32?
        var threadIDs: [Int32] = []
    }

    private let handler: Handler
    private let syscalls: Syscalls
    private let procFS: ProcFS
    private let epoll: Int32
    private let wake: Int32
    private let state: LockedCondition<State>
    private let delivery = Mutex(())
    private let threads = Mutex<[WatcherThread]>([])

    /// Starts the watcher's threads.
    public convenience init(mode: Mode, handler: @escaping Handler) throws {
        try self.init(mode: mode, syscalls: .live, handler: handler)
    }

    init(mode: Mode, syscalls: Syscalls, handler: @escaping Handler) throws {
        self.mode = mode
        self.handler = handler
        self.syscalls = syscalls
        self.procFS = ProcFS(syscalls: syscalls)
        self.state = LockedCondition(State())
        let epoll = try syscalls.epollCreate()
        let wake: Int32
        do {
            wake = try syscalls.eventfdCreate()
            do {
                try syscalls.epollAdd(epoll, wake, token: 0)
            } catch {
                syscalls.close(wake)
                throw error
            }
        } catch {
            syscalls.close(epoll)
            throw error
        }
        self.epoll = epoll
        self.wake = wake
        do {
            let epollThread = try WatcherThread(name: "offstage-exits") { [self] in runEpoll() }
            threads.withLock { $0.append(epollThread) }
            if mode == .reapAllChildren {
                let reaper = try WatcherThread(name: "offstage-reaper") { [self] in runReaper() }
                threads.withLock { $0.append(reaper) }
            }
        } catch {
            shutdown()
            throw error
        }
    }

    /// Announces a child just spawned. `.ownChildrenOnly`: starts watching it through a pidfd. `.reapAllChildren`:
    /// wakes the reaper if it was waiting for children to exist.
    public func childAdded(pid: Int32) throws {
        switch mode {
        case .ownChildrenOnly:
            try register(pid: pid, startTime: nil)
        case .reapAllChildren:
            let stopping = state.withLock { state in
                state.childGeneration &+= 1
                return state.stopping
            }
            if stopping { throw ProcessControlError.watcherStopped }
            state.broadcast()
        }
    }

    /// Watches a process that is not our child; its exit is reported as `.unknown`. With `startTime` (from
    /// `ProcFS.startTime(of:)` when the process was first seen) a process that has reused the pid is refused.
    /// Throws `noSuchProcess` when it has already exited.
    public func watch(pid: Int32, startTime: UInt64? = nil) throws {
        try register(pid: pid, startTime: startTime)
    }

    /// Spawns through `control` and announces the child, so no exit can be missed between the two.
    public func spawn(_ request: SpawnRequest, in group: AppGroup, using control: any ProcessControl) throws -> Int32 {
        let pid = try control.spawn(request, in: group)
        do {
            try childAdded(pid: pid)
        } catch {
            // An unwatched app would never be reported or reaped: do not leave it running, nor as a zombie.
            try? control.kill(group, leader: pid)
            _ = try? syscalls.waitPid(pid, options: OFFSTAGE_WEXITED)
            throw error
        }
        return pid
    }

    /// Stops the threads and closes the watcher's descriptors. Exits that happen afterwards are not reported.
    public func shutdown() {
        let (first, needsWakeChild) = state.withLock { state -> (Bool, Bool) in
            if state.stopping { return (false, false) }
            state.stopping = true
            return (true, mode == .reapAllChildren && !state.reaperWaiting)
        }
        guard first else { return }
        state.broadcast()
        if needsWakeChild {
            // waitid(P_ALL) cannot be interrupted without a signal handler; a child that exits at once wakes it.
            state.withLock { state in state.wakeChild = try? syscalls.forkExitingChild() }
        }
        state.withLock { state in
            if !state.descriptorsClosed { syscalls.eventfdSignal(wake) }
        }
        for thread in threads.withLock({ $0 }) where !thread.isCurrent {
            thread.join()
        }
        if let child = state.withLock({ $0.wakeChild }) {
            // ECHILD when the reaper got it first.
            _ = try? syscalls.waitPid(child, options: OFFSTAGE_WEXITED)
        }
    }

    /// The kernel thread ids of the watcher's threads (for checking that they sleep while idle).
    var threadIDs: [Int32] { state.withLock { $0.threadIDs } }

    /// How many processes are watched through a pidfd.
    var watchedCount: Int { state.withLock { $0.watches.count } }

    // MARK: - Registration

    private func register(pid: Int32, startTime: UInt64?) throws {
        let fd: Int32
        do {
            fd = try syscalls.pidfdOpen(pid)
        } catch let error as ProcessControlError where error.errno == ESRCH {
            throw ProcessControlError.noSuchProcess(pid: pid)
        }
        // The pidfd pins the process we opened; if the start time still matches after opening, it is the one meant.
        if let startTime, procFS.startTime(of: pid) != startTime {
            syscalls.close(fd)
            throw ProcessControlError.noSuchProcess(pid: pid)
        }
        try state.withLock { state in
            guard !state.stopping else {
                syscalls.close(fd)
                throw ProcessControlError.watcherStopped
            }
            guard state.tokenByPid[pid] == nil else {
                syscalls.close(fd)
                return
            }
            let token = state.nextToken
            state.nextToken += 1
            do {
                try syscalls.epollAdd(epoll, fd, token: token)
            } catch {
                syscalls.close(fd)
                throw error
            }
            state.watches[token] = Watch(pid: pid, fd: fd)
            state.tokenByPid[pid] = token
        }
    }

    // MARK: - Threads

    private func runEpoll() {
        state.withLock { $0.threadIDs.append(syscalls.currentThreadID()) }
        defer { closeDescriptors() }
        while true {
            guard let tokens = try? syscalls.epollWait(epoll) else { return }
            var exits: [(Int32, ExitStatus)] = []
            var stop = false
            for token in tokens {
                if token == 0 {
                    syscalls.eventfdDrain(wake)
                    stop = state.withLock { $0.stopping }
                } else if let exit = collect(token: token) {
                    exits.append(exit)
                }
            }
            deliver(exits)
            if stop { return }
        }
    }

    // Reaps (or, for a non-child, just forgets) the process behind a readable pidfd.
    private func collect(token: UInt64) -> (Int32, ExitStatus)? {
        state.withLock { state in
            guard let watch = state.watches.removeValue(forKey: token) else { return nil }
            state.tokenByPid[watch.pid] = nil
            syscalls.epollRemove(epoll, watch.fd)
            defer { syscalls.close(watch.fd) }
            do {
                // A readable pidfd means the process has exited; for our child the zombie is waitable now.
                if let waited = try syscalls.waitPidfd(watch.fd, options: OFFSTAGE_WEXITED | OFFSTAGE_WNOHANG) {
                    return (watch.pid, waited.status)
                }
                let waited = try syscalls.waitPidfd(watch.fd, options: OFFSTAGE_WEXITED)
                return (watch.pid, waited?.status ?? .unknown)
            } catch {
                // ECHILD: not our child, so how it ended is not ours to know.
                return (watch.pid, .unknown)
            }
        }
    }

    private func runReaper() {
        state.withLock { $0.threadIDs.append(syscalls.currentThreadID()) }
        while true {
            guard let generation = state.withLock({ $0.stopping ? nil : $0.childGeneration }) else { return }
            // WNOWAIT: find an exited child without reaping it, then reap it under the lock, so a child that also
            // has a pidfd watch is reported once, by whichever thread gets the lock first.
            guard let exited = try? syscalls.waitAny(options: OFFSTAGE_WEXITED | OFFSTAGE_WNOWAIT) else {
                // ECHILD: no children. Sleep until childAdded or shutdown; no timer, no polling.
                state.wait { state in
                    state.reaperWaiting = !state.stopping && state.childGeneration == generation
                    return state.reaperWaiting
                }
                continue
            }
            let exit = state.withLock { state -> (Int32, ExitStatus)? in
                guard let reaped = try? syscalls.waitPid(exited.pid, options: OFFSTAGE_WEXITED | OFFSTAGE_WNOHANG)
                else { return nil }
                if let token = state.tokenByPid.removeValue(forKey: reaped.pid),
                    let watch = state.watches.removeValue(forKey: token)
                {
                    syscalls.epollRemove(epoll, watch.fd)
                    syscalls.close(watch.fd)
                }
                return reaped.pid == state.wakeChild ? nil : (reaped.pid, reaped.status)
            }
            if let exit { deliver([exit]) }
        }
    }

    private func deliver(_ exits: [(Int32, ExitStatus)]) {
        guard !exits.isEmpty else { return }
        delivery.withLock { _ in
            for (pid, status) in exits { handler(pid, status) }
        }
    }

    private func closeDescriptors() {
        state.withLock { state in
            for watch in state.watches.values { syscalls.close(watch.fd) }
            state.watches.removeAll()
            state.tokenByPid.removeAll()
            state.stopping = true
            state.descriptorsClosed = true
            syscalls.close(epoll)
            syscalls.close(wake)
        }
        state.broadcast()
    }
}
