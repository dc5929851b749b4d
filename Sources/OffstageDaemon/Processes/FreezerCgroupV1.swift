import Glibc

/// Freezes through the cgroup v1 `freezer` controller (`freezer.state` FROZEN/THAWED), for machines whose
/// cgroup2 hierarchy is missing or unusable.
///
/// v1 has no kill file, and a SIGKILL stays pending on a frozen task until it is thawed: `kill` therefore signals
/// every process in `cgroup.procs` and then thaws the group so the signal lands.
public struct FreezerCgroupV1: ProcessControl {
    public var kind: FreezerKind { .cgroupV1 }
    /// How long `freeze` waits for `freezer.state` to read FROZEN before it thaws and throws.
    public let freezeTimeout: Duration

    let hierarchy: CgroupHierarchy
    private let syscalls: Syscalls
    private let launcher: ProcessLauncher

    /// Uses the v1 freezer hierarchy at `mount`; creates `offstage.<instanceName>` there to check it can.
    /// Throws `ProcessControlError.unavailable` saying why when it cannot.
    public init(instanceName: String, mount: CgroupMounts.Mount, freezeTimeout: Duration = .milliseconds(100)) throws {
        try self.init(instanceName: instanceName, mount: mount, freezeTimeout: freezeTimeout, syscalls: .live)
    }

    init(instanceName: String, mount: CgroupMounts.Mount, freezeTimeout: Duration, syscalls: Syscalls) throws {
        self.freezeTimeout = freezeTimeout
        self.syscalls = syscalls
        self.launcher = ProcessLauncher(syscalls: syscalls)
        self.hierarchy = try CgroupHierarchy(
            kind: .cgroupV1, mount: mount, instanceName: instanceName, syscalls: syscalls)
        try probe()
    }

    private func probe() throws {
        let created = try hierarchy.prepareInstance()
        let stateFile = CgroupHierarchy.join(hierarchy.instancePath, "freezer.state")
        guard syscalls.fileExists(stateFile) else {
            if created { hierarchy.remove(directory: hierarchy.instancePath) }
            throw ProcessControlError.unavailable(
                kind: .cgroupV1, reason: "\(stateFile) does not exist; \(hierarchy.mount.mountPoint) is not a freezer")
        }
    }

    public func makeGroup(forApp key: String) throws -> AppGroup {
        try hierarchy.makeGroup(forApp: key)
    }

    public func spawn(_ request: SpawnRequest, in group: AppGroup) throws -> Int32 {
        let path = try hierarchy.path(of: group)
        // FREEZING counts as frozen too.
        try hierarchy.prepareForSpawn(
            group, path: path,
            isFrozen: { (try? Self.state(syscalls.readFile(CgroupHierarchy.join($0, "freezer.state")))) != "THAWED" },
            thaw: { try thaw(group, leader: 0) })
        return try launcher.spawn(request, cgroupProcsPaths: [CgroupHierarchy.join(path, "cgroup.procs")] + request.alsoJoin)
    }

    public func adopt(pid: Int32, into group: AppGroup) throws {
        try hierarchy.adopt(pid: pid, intoDirectory: try hierarchy.path(of: group))
    }

    public func freeze(_ group: AppGroup, leader: Int32) throws {
        let path = try hierarchy.path(of: group)
        let stateFile = CgroupHierarchy.join(path, "freezer.state")
        do {
            try syscalls.writeFile(stateFile, "FROZEN")
            // Each read of freezer.state makes the kernel re-check its tasks (FREEZING until all are in the
            // refrigerator); the file has no change notification.
            let frozen = try StateWait.until(ContinuousClock.now + freezeTimeout, syscalls: syscalls) {
                try Self.state(syscalls.readFile(stateFile)) == "FROZEN"
            }
            guard frozen else {
                throw ProcessControlError.freezeTimedOut(app: group.key, kind: kind, timeout: freezeTimeout)
            }
        } catch {
            try? thaw(group, leader: leader)
            throw error
        }
    }

    public func thaw(_ group: AppGroup, leader: Int32) throws {
        try syscalls.writeFile(CgroupHierarchy.join(try hierarchy.path(of: group), "freezer.state"), "THAWED")
    }

    public func terminate(_ group: AppGroup, leader: Int32) throws {
        let path = try hierarchy.path(of: group)
        try hierarchy.signalAll(inDirectory: path, SIGTERM)
        try thaw(group, leader: leader)
    }

    public func kill(_ group: AppGroup, leader: Int32) throws {
        let path = try hierarchy.path(of: group)
        // Freezing first stops the tree forking while it is signalled; whether it confirms does not matter,
        // the signals are re-sent to any newcomer.
        try? syscalls.writeFile(CgroupHierarchy.join(path, "freezer.state"), "FROZEN")
        try hierarchy.signalAll(inDirectory: path, SIGKILL)
        try thaw(group, leader: leader)
    }

    public func isFrozen(_ group: AppGroup, leader: Int32) -> Bool {
        guard let path = try? hierarchy.path(of: group),
            let text = try? syscalls.readFile(CgroupHierarchy.join(path, "freezer.state"))
        else { return false }
        return Self.state(text) == "FROZEN"
    }

    public func members(of group: AppGroup, leader: Int32) -> [Int32] {
        guard let path = try? hierarchy.path(of: group) else { return [] }
        return hierarchy.pids(inDirectory: path)
    }

    public func appKey(owningPid pid: Int32) -> String? {
        hierarchy.appKey(owningPid: pid) { $0.controllers.contains("freezer") }
    }

    public func removeGroup(_ group: AppGroup) {
        guard let path = try? hierarchy.path(of: group) else { return }
        hierarchy.remove(directory: path)
    }

    public func removeAll() {
        hierarchy.removeAll()
    }

    private static func state(_ text: String) -> String {
        String(text.split(separator: "\n").first ?? "")
    }
}
