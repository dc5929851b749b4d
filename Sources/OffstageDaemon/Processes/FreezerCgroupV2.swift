import Glibc

/// Freezes through cgroup v2: `cgroup.freeze`, confirmed by `frozen 1` in `cgroup.events`, and kills through
/// `cgroup.kill`. The freeze is invisible to the app and its parent, and the kill reaches every process at once,
/// including ones forking at that moment.
public struct FreezerCgroupV2: ProcessControl {
    public var kind: FreezerKind { .cgroupV2 }
    /// How long `freeze` waits for the kernel to confirm before it thaws and throws.
    public let freezeTimeout: Duration

    let hierarchy: CgroupHierarchy
    private let syscalls: Syscalls
    private let launcher: ProcessLauncher

    /// Uses the cgroup2 hierarchy at `mount`; creates `offstage.<instanceName>` there to check it can.
    /// Throws `ProcessControlError.unavailable` saying why when it cannot.
    public init(instanceName: String, mount: CgroupMounts.Mount, freezeTimeout: Duration = .milliseconds(100)) throws {
        try self.init(instanceName: instanceName, mount: mount, freezeTimeout: freezeTimeout, syscalls: .live)
    }

    init(instanceName: String, mount: CgroupMounts.Mount, freezeTimeout: Duration, syscalls: Syscalls) throws {
        self.freezeTimeout = freezeTimeout
        self.syscalls = syscalls
        self.launcher = ProcessLauncher(syscalls: syscalls)
        self.hierarchy = try CgroupHierarchy(
            kind: .cgroupV2, mount: mount, instanceName: instanceName, syscalls: syscalls)
        try probe()
    }

    private func probe() throws {
        let created = try hierarchy.prepareInstance()
        let freezeFile = CgroupHierarchy.join(hierarchy.instancePath, "cgroup.freeze")
        do {
            guard syscalls.fileExists(freezeFile) else {
                throw ProcessControlError.unavailable(
                    kind: .cgroupV2,
                    reason: "\(freezeFile) does not exist; the cgroup v2 freezer needs Linux 5.2 or later")
            }
            try syscalls.writeFile(freezeFile, "0")
        } catch {
            if created { hierarchy.remove(directory: hierarchy.instancePath) }
            if let error = error as? ProcessControlError, case .unavailable = error { throw error }
            throw ProcessControlError.unavailable(kind: .cgroupV2, reason: "\(error)")
        }
    }

    public func makeGroup(forApp key: String) throws -> AppGroup {
        try hierarchy.makeGroup(forApp: key)
    }

    public func spawn(_ request: SpawnRequest, in group: AppGroup) throws -> Int32 {
        let path = try hierarchy.path(of: group)
        // cgroup.freeze (what was asked), not cgroup.events: a freeze still in progress counts too.
        try hierarchy.prepareForSpawn(
            group, path: path,
            isFrozen: { (try? syscalls.readFile(CgroupHierarchy.join($0, "cgroup.freeze"))) != "0\n" },
            thaw: { try thaw(group, leader: 0) })
        return try launcher.spawn(request, cgroupProcsPaths: [CgroupHierarchy.join(path, "cgroup.procs")] + request.alsoJoin)
    }

    public func adopt(pid: Int32, into group: AppGroup) throws {
        try hierarchy.adopt(pid: pid, intoDirectory: try hierarchy.path(of: group))
    }

    public func freeze(_ group: AppGroup, leader: Int32) throws {
        let path = try hierarchy.path(of: group)
        let eventsPath = CgroupHierarchy.join(path, "cgroup.events")
        // Opened before the write so that kernfs reports any change after our last read as POLLPRI. The kernel
        // rate-limits those notifications to one per 10 ms, while a freeze usually completes in microseconds, so
        // the file is also re-read after short, growing pauses.
        let events = try syscalls.open(eventsPath, O_RDONLY)
        defer { syscalls.close(events) }
        do {
            try syscalls.writeFile(CgroupHierarchy.join(path, "cgroup.freeze"), "1")
            let deadline = ContinuousClock.now + freezeTimeout
            var pause = Duration.microseconds(20)
            while true {
                if Self.saysFrozen(try syscalls.readAll(events, path: eventsPath)) { return }
                let remaining = deadline - .now
                guard remaining > .zero else {
                    throw ProcessControlError.freezeTimedOut(app: group.key, kind: kind, timeout: freezeTimeout)
                }
                _ = try syscalls.pollPriority(events, path: eventsPath, timeout: min(pause, remaining))
                pause = min(pause * 2, .milliseconds(5))
            }
        } catch {
            try? thaw(group, leader: leader)
            throw error
        }
    }

    public func thaw(_ group: AppGroup, leader: Int32) throws {
        try syscalls.writeFile(CgroupHierarchy.join(try hierarchy.path(of: group), "cgroup.freeze"), "0")
    }

    public func terminate(_ group: AppGroup, leader: Int32) throws {
        let path = try hierarchy.path(of: group)
        try hierarchy.signalAll(inDirectory: path, SIGTERM)
        try thaw(group, leader: leader)
    }

    public func kill(_ group: AppGroup, leader: Int32) throws {
        let path = try hierarchy.path(of: group)
        do {
            try syscalls.writeFile(CgroupHierarchy.join(path, "cgroup.kill"), "1")
        } catch let error as ProcessControlError where error.errno == ENOENT && syscalls.isDirectory(path) {
            // cgroup.kill arrived in Linux 5.14: signal each process instead (SIGKILL also ends frozen tasks).
            try hierarchy.signalAll(inDirectory: path, SIGKILL)
        }
        // A killed group may be reused by the app's next launch, which must not start frozen.
        try thaw(group, leader: leader)
    }

    public func isFrozen(_ group: AppGroup, leader: Int32) -> Bool {
        guard let path = try? hierarchy.path(of: group),
            let text = try? syscalls.readFile(CgroupHierarchy.join(path, "cgroup.events"))
        else { return false }
        return Self.saysFrozen(text)
    }

    public func members(of group: AppGroup, leader: Int32) -> [Int32] {
        guard let path = try? hierarchy.path(of: group) else { return [] }
        return hierarchy.pids(inDirectory: path)
    }

    public func appKey(owningPid pid: Int32) -> String? {
        hierarchy.appKey(owningPid: pid) { $0.isUnified }
    }

    public func removeGroup(_ group: AppGroup) {
        guard let path = try? hierarchy.path(of: group) else { return }
        hierarchy.remove(directory: path)
    }

    public func removeAll() {
        hierarchy.removeAll()
    }

    /// Whether the text of `cgroup.events` has the line `frozen 1`.
    static func saysFrozen(_ events: String) -> Bool {
        events.split(separator: "\n").contains("frozen 1")
    }
}
