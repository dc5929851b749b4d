import Glibc
import Synchronization

/// The last resort where no cgroup is writable: SIGSTOP/SIGCONT/SIGKILL to the app's process group and to every
/// descendant found in `/proc` (a child may have left the group with setsid or setpgid).
///
/// Weaker than a cgroup: the app's parent is told about the stop, and a process that both leaves the group and is
/// orphaned escapes. Apps are told apart by their leaders, which this instance remembers from `spawn` and `adopt`.
public struct SignalStopFreezer: ProcessControl {
    public var kind: FreezerKind { .signalStop }
    /// How long `freeze` waits for every process to show state T before it continues them and throws.
    public let freezeTimeout: Duration

    private struct Leader: Sendable {
        let key: String
        let startTime: UInt64
    }

    private final class Leaders: Sendable {
        let byPid = Mutex<[Int32: Leader]>([:])
    }

    private let leaders = Leaders()
    private let syscalls: Syscalls
    private let procFS: ProcFS
    private let tree: ProcessTree
    private let launcher: ProcessLauncher

    /// Creates the freezer; it needs nothing from the system.
    public init(freezeTimeout: Duration = .milliseconds(100)) {
        self.init(freezeTimeout: freezeTimeout, syscalls: .live)
    }

    init(freezeTimeout: Duration, syscalls: Syscalls) {
        self.freezeTimeout = freezeTimeout
        self.syscalls = syscalls
        self.procFS = ProcFS(syscalls: syscalls)
        self.tree = ProcessTree(procFS: procFS)
        self.launcher = ProcessLauncher(syscalls: syscalls)
    }

    public func makeGroup(forApp key: String) throws -> AppGroup {
        AppGroup(key: key, kind: .signalStop, directoryName: try CgroupName.escape(key), cgroupPath: nil)
    }

    public func spawn(_ request: SpawnRequest, in group: AppGroup) throws -> Int32 {
        let pid = try launcher.spawn(request, cgroupProcsPaths: request.alsoJoin)
        remember(leader: pid, key: group.key)
        return pid
    }

    public func adopt(pid: Int32, into group: AppGroup) throws {
        guard procFS.isAlive(pid: pid) else { throw ProcessControlError.noSuchProcess(pid: pid) }
        remember(leader: pid, key: group.key)
    }

    public func freeze(_ group: AppGroup, leader: Int32) throws {
        var stopped = Set<Int32>()
        do {
            // The group signal is race-free against forks inside the group (the kernel restarts such a fork);
            // descendants that left the group are found by walking /proc.
            try send(SIGSTOP, toGroupOf: leader)
            var members = tree.members(ofLeader: leader)
            for pid in members {
                try send(SIGSTOP, to: pid)
                stopped.insert(pid)
            }
            let confirmed = try StateWait.until(ContinuousClock.now + freezeTimeout, syscalls: syscalls) {
                // Cheap check of the known processes first; walking all of /proc is the expensive part.
                guard members.allSatisfy({ procFS.stat(of: $0).map { $0.isStopped || $0.isZombie } ?? true }) else {
                    return false
                }
                // One more walk catches a process forked outside the group before its parent stopped.
                members = tree.members(ofLeader: leader)
                let newcomers = members.filter { !stopped.contains($0) }
                for pid in newcomers {
                    try send(SIGSTOP, to: pid)
                    stopped.insert(pid)
                }
                return newcomers.isEmpty
            }
            guard confirmed else {
                throw ProcessControlError.freezeTimedOut(app: group.key, kind: kind, timeout: freezeTimeout)
            }
        } catch {
            try? thaw(group, leader: leader)
            throw error
        }
    }

    public func thaw(_ group: AppGroup, leader: Int32) throws {
        try signalTree(SIGCONT, leader: leader)
    }

    public func terminate(_ group: AppGroup, leader: Int32) throws {
        try signalTree(SIGTERM, leader: leader)
        // A stopped process keeps SIGTERM pending until it runs again.
        try signalTree(SIGCONT, leader: leader)
    }

    public func kill(_ group: AppGroup, leader: Int32) throws {
        // SIGKILL ends stopped processes too; repeated so processes forked meanwhile are not missed.
        var killed = Set<Int32>()
        for _ in 0..<8 {
            try send(SIGKILL, toGroupOf: leader)
            let pending = tree.members(ofLeader: leader).filter { !killed.contains($0) }
            if pending.isEmpty { return }
            for pid in pending {
                try send(SIGKILL, to: pid)
                killed.insert(pid)
            }
        }
    }

    public func isFrozen(_ group: AppGroup, leader: Int32) -> Bool {
        let stats = tree.members(ofLeader: leader).compactMap { procFS.stat(of: $0) }.filter { !$0.isZombie }
        return !stats.isEmpty && stats.allSatisfy(\.isStopped)
    }

    public func members(of group: AppGroup, leader: Int32) -> [Int32] {
        tree.members(ofLeader: leader)
    }

    public func appKey(owningPid pid: Int32) -> String? {
        // The pid itself, its process group, then its ancestors: the first that is a known leader names the app.
        var current = pid
        for _ in 0..<64 {
            guard current > 1, let stat = procFS.stat(of: current) else { return nil }
            if let key = key(ofLeader: current, startTime: stat.startTime) { return key }
            if stat.processGroup != current, let groupStart = procFS.startTime(of: stat.processGroup),
                let key = key(ofLeader: stat.processGroup, startTime: groupStart)
            {
                return key
            }
            current = stat.parentPid
        }
        return nil
    }

    public func removeGroup(_ group: AppGroup) {
        leaders.byPid.withLock { $0 = $0.filter { $0.value.key != group.key } }
    }

    public func removeAll() {
        leaders.byPid.withLock { $0.removeAll() }
    }

    private func remember(leader pid: Int32, key: String) {
        guard let startTime = procFS.startTime(of: pid) else { return }
        let alive = Set(leaders.byPid.withLock { Array($0.keys) }.filter { procFS.isAlive(pid: $0) })
        leaders.byPid.withLock { byPid in
            // Forget leaders that have exited, so the table does not grow with every launch.
            byPid = byPid.filter { alive.contains($0.key) }
            byPid[pid] = Leader(key: key, startTime: startTime)
        }
    }

    private func key(ofLeader pid: Int32, startTime: UInt64) -> String? {
        leaders.byPid.withLock { byPid in
            guard let leader = byPid[pid], leader.startTime == startTime else { return nil }
            return leader.key
        }
    }

    private func signalTree(_ signal: Int32, leader: Int32) throws {
        try send(signal, toGroupOf: leader)
        for pid in tree.members(ofLeader: leader) {
            try send(signal, to: pid)
        }
    }

    private func send(_ signal: Int32, toGroupOf leader: Int32) throws {
        // A wrong leader here would stop the daemon's own process group or a shell above it.
        guard leader > 1, !tree.isDaemonOrAncestor(leader) else {
            throw ProcessControlError.invalidRequest(
                "pid \(leader) is not an app leader (it is the daemon, an ancestor of it, or pid 0/1)")
        }
        do {
            try syscalls.kill(-leader, signal)
        } catch let error as ProcessControlError where error.errno == ESRCH {
            // The group is empty (every member exited or moved); the descendants are signalled one by one.
        }
    }

    private func send(_ signal: Int32, to pid: Int32) throws {
        do {
            try syscalls.kill(pid, signal)
        } catch let error as ProcessControlError where error.errno == ESRCH {
            // Exited meanwhile.
        }
    }
}
