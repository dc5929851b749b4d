import Glibc

/// The part of the cgroup freezers that does not depend on the cgroup version: this instance's directory
/// `offstage.<instance>` under the mount point, one directory per app inside it, their `cgroup.procs`, and
/// mapping a process back to its app through `/proc/PID/cgroup`.
struct CgroupHierarchy: Sendable {
    let kind: FreezerKind
    let mount: CgroupMounts.Mount
    let syscalls: Syscalls
    let procFS: ProcFS
    /// `offstage.<escaped instance name>`: unique per daemon, so daemons running side by side (parallel tests)
    /// never touch each other's groups.
    let instanceDirectoryName: String

    init(kind: FreezerKind, mount: CgroupMounts.Mount, instanceName: String, syscalls: Syscalls) throws {
        self.kind = kind
        self.mount = mount
        self.syscalls = syscalls
        self.procFS = ProcFS(syscalls: syscalls)
        self.instanceDirectoryName = "offstage." + (try CgroupName.escape(instanceName))
    }

    /// The absolute path of this instance's directory.
    var instancePath: String { Self.join(mount.mountPoint, instanceDirectoryName) }

    /// Creates the instance directory; returns whether it was created now (false: it already existed).
    @discardableResult
    func createInstanceDirectory() throws -> Bool {
        try makeDirectory(instancePath)
    }

    /// Checks that the hierarchy can be used: the mount is writable and the instance directory can be created.
    /// Returns whether it was created now; throws `ProcessControlError.unavailable` saying why not.
    func prepareInstance() throws -> Bool {
        guard !mount.isReadOnly else {
            throw ProcessControlError.unavailable(kind: kind, reason: "\(mount.mountPoint) is mounted read-only")
        }
        do {
            return try createInstanceDirectory()
        } catch {
            throw ProcessControlError.unavailable(kind: kind, reason: "\(error)")
        }
    }

    /// The group of `key`, creating its directory unless it exists.
    func makeGroup(forApp key: String) throws -> AppGroup {
        let name = try CgroupName.escape(key)
        try createInstanceDirectory()
        let path = Self.join(instancePath, name)
        try makeDirectory(path)
        return AppGroup(key: key, kind: kind, directoryName: name, cgroupPath: path)
    }

    /// The cgroup directory of a group made by this hierarchy.
    func path(of group: AppGroup) throws -> String {
        guard group.kind == kind, let path = group.cgroupPath, path.hasPrefix(instancePath + "/") else {
            throw ProcessControlError.invalidName(
                group.key,
                reason: "group \(group) was not made by this \(kind.rawValue) freezer; use makeGroup(forApp:)")
        }
        return path
    }

    /// The pids listed in a cgroup directory's `cgroup.procs`.
    func pids(inDirectory path: String) -> [Int32] {
        guard let text = try? syscalls.readFile(Self.join(path, "cgroup.procs")) else { return [] }
        return text.split(separator: "\n").compactMap { Int32($0) }
    }

    /// Makes sure a new process will not stop before exec: the child joins the cgroup before it execs, and the
    /// parent waits for the exec, so a frozen group would hang the spawn. A frozen group with nobody inside (left by
    /// a daemon that died between freeze and kill) is thawed; one with processes is refused.
    func prepareForSpawn(_ group: AppGroup, path: String, isFrozen: (String) -> Bool, thaw: () throws -> Void) throws {
        guard isFrozen(path) else { return }
        guard pids(inDirectory: path).isEmpty else { throw ProcessControlError.groupFrozen(app: group.key) }
        try thaw()
    }

    /// Moves `pid` and its descendants into the directory, repeating while the tree forks new processes that
    /// were created before their parent moved.
    func adopt(pid: Int32, intoDirectory path: String) throws {
        guard procFS.isAlive(pid: pid) else { throw ProcessControlError.noSuchProcess(pid: pid) }
        let procs = Self.join(path, "cgroup.procs")
        let tree = ProcessTree(procFS: procFS)
        var moved = Set<Int32>()
        for _ in 0..<4 {
            let pending = tree.descendants(of: [pid]).filter { !moved.contains($0) }
            if pending.isEmpty { return }
            for member in pending {
                do {
                    try syscalls.writeFile(procs, "\(member)")
                } catch let error as ProcessControlError where error.errno == ESRCH && member != pid {
                    // A descendant exited meanwhile: nothing to move.
                }
                moved.insert(member)
            }
        }
    }

    /// Sends `signal` to every process in the directory; re-reads the list so processes forked meanwhile get it
    /// too. Processes that exit meanwhile are skipped.
    func signalAll(inDirectory path: String, _ signal: Int32) throws {
        var signaled = Set<Int32>()
        for _ in 0..<8 {
            let pending = pids(inDirectory: path).filter { !signaled.contains($0) }
            if pending.isEmpty { return }
            for pid in pending {
                do {
                    try syscalls.kill(pid, signal)
                } catch let error as ProcessControlError where error.errno == ESRCH {
                    // Already gone.
                }
                signaled.insert(pid)
            }
        }
    }

    /// Removes an app directory if it is empty; busy or missing directories are left alone.
    func remove(directory path: String) {
        do {
            try syscalls.rmdir(path)
        } catch {
            // EBUSY: processes are still inside (the caller removes it after they exit); ENOENT: already gone.
        }
    }

    /// Removes every empty app directory of this instance, then the instance directory.
    func removeAll() {
        let names = (try? syscalls.listDirectory(instancePath)) ?? []
        for name in names where syscalls.isDirectory(Self.join(instancePath, name)) {
            remove(directory: Self.join(instancePath, name))
        }
        remove(directory: instancePath)
    }

    /// The app key of the group that holds `pid`, read from its line of `/proc/PID/cgroup`.
    func appKey(owningPid pid: Int32, line matches: (ProcessCgroupEntry) -> Bool) -> String? {
        guard let entry = procFS.cgroups(of: pid).first(where: matches) else { return nil }
        return appKey(cgroupPath: entry.path)
    }

    /// The app key encoded in a cgroup path as `/proc/PID/cgroup` shows it (relative to the hierarchy root).
    func appKey(cgroupPath: String) -> String? {
        let prefix = Self.join(mount.root, instanceDirectoryName) + "/"
        guard cgroupPath.hasPrefix(prefix) else { return nil }
        let rest = cgroupPath.dropFirst(prefix.count)
        guard let name = rest.split(separator: "/").first else { return nil }
        return CgroupName.unescape(String(name))
    }

    /// Makes a directory; returns false when it already existed as a directory.
    @discardableResult
    private func makeDirectory(_ path: String) throws -> Bool {
        do {
            try syscalls.mkdir(path)
            return true
        } catch let error as ProcessControlError where error.errno == EEXIST && syscalls.isDirectory(path) {
            return false
        }
    }

    static func join(_ base: String, _ name: String) -> String {
        base.hasSuffix("/") ? base + name : base + "/" + name
    }
}
