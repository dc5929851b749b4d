import Glibc

/// Each app's group under the kernel's memory controller (SPEC MEM-1, MEM-2): what the app uses, its limit, and how
/// many of its processes the kernel ended for memory.
///
/// The controller is found from `/proc/self/mountinfo`: a cgroup v1 hierarchy carrying `memory` (a hybrid machine
/// such as this one), else the cgroup2 hierarchy when its root's `cgroup.controllers` lists `memory` and its
/// `cgroup.subtree_control` hands it down. The groups are `offstage.<instance>/<app>`, like the freezer's; on cgroup2
/// that is the freezer's own directory, on v1 a directory of the memory hierarchy the process also joins at spawn.
///
/// | | cgroup v1 | cgroup2 |
/// |---|---|---|
/// | in use | `memory.usage_in_bytes` | `memory.current` |
/// | limit | `memory.limit_in_bytes` (`-1`: none) | `memory.max` (`max`: none) |
/// | kills for memory | `oom_kill` of `memory.oom_control` | `oom_kill` of `memory.events` |
struct MemoryCgroups: Sendable {
    /// The two kinds of memory controller.
    enum Version: String, Sendable {
        case cgroupV1 = "cgroup v1"
        case cgroupV2 = "cgroup v2"
    }

    let version: Version
    let hierarchy: CgroupHierarchy
    let syscalls: Syscalls

    /// The controller of this machine, with this instance's directory made; or why none can be used.
    static func make(instanceName: String, mounts: CgroupMounts, syscalls: Syscalls = .live) -> Result<Self, Unavailable> {
        var tried: [String] = []
        if let mount = mounts.memory {
            do {
                return .success(try Self(version: .cgroupV1, mount: mount, instanceName: instanceName, syscalls: syscalls))
            } catch {
                tried.append("\(error)")
            }
        }
        if let mount = mounts.unified {
            do {
                return .success(try Self(version: .cgroupV2, mount: mount, instanceName: instanceName, syscalls: syscalls))
            } catch {
                tried.append("\(error)")
            }
        }
        if tried.isEmpty { tried.append("no cgroup hierarchy carries the memory controller in /proc/self/mountinfo") }
        return .failure(Unavailable(reason: tried.joined(separator: "; ")))
    }

    /// Why no memory controller can be used.
    struct Unavailable: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    private init(version: Version, mount: CgroupMounts.Mount, instanceName: String, syscalls: Syscalls) throws {
        self.version = version
        self.syscalls = syscalls
        // The hierarchy's bookkeeping (directories, `cgroup.procs`, removal) is the freezer's; the kind only names it.
        hierarchy = try CgroupHierarchy(
            kind: version == .cgroupV1 ? .cgroupV1 : .cgroupV2, mount: mount, instanceName: instanceName,
            syscalls: syscalls)
        if version == .cgroupV2 {
            // cgroup2 hands a controller down only where every parent enables it: the root must already do so (the
            // daemon changes no group but its own), then the instance enables it for the apps'.
            let root = mount.mountPoint
            let controllers = (try? syscalls.readFile(CgroupHierarchy.join(root, "cgroup.controllers"))) ?? ""
            guard controllers.split(whereSeparator: \.isWhitespace).contains("memory") else {
                throw Unavailable(reason: "\(root) (cgroup2) has no memory controller in cgroup.controllers")
            }
            let enabled = (try? syscalls.readFile(CgroupHierarchy.join(root, "cgroup.subtree_control"))) ?? ""
            guard enabled.split(whereSeparator: \.isWhitespace).contains("memory") else {
                throw Unavailable(
                    reason: "\(root)/cgroup.subtree_control does not enable memory for the groups below it; "
                        + "write +memory into it to let the daemon use it")
            }
        }
        let created: Bool
        do {
            created = try hierarchy.prepareInstance()
        } catch {
            throw Unavailable(reason: "\(version.rawValue) memory controller at \(mount.mountPoint): \(error)")
        }
        do {
            if version == .cgroupV2 {
                try syscalls.writeFile(CgroupHierarchy.join(hierarchy.instancePath, "cgroup.subtree_control"), "+memory")
            }
            guard syscalls.fileExists(CgroupHierarchy.join(hierarchy.instancePath, limitFile)) else {
                throw Unavailable(reason: "\(hierarchy.instancePath) has no \(limitFile)")
            }
        } catch {
            if created { hierarchy.remove(directory: hierarchy.instancePath) }
            throw Unavailable(reason: "\(version.rawValue) memory controller at \(mount.mountPoint): \(error)")
        }
    }

    /// Where the groups are, for people.
    var location: String { "\(version.rawValue) at \(hierarchy.instancePath)" }

    var usageFile: String { version == .cgroupV1 ? "memory.usage_in_bytes" : "memory.current" }
    var limitFile: String { version == .cgroupV1 ? "memory.limit_in_bytes" : "memory.max" }
    var eventsFile: String { version == .cgroupV1 ? "memory.oom_control" : "memory.events" }

    /// Makes the app's group (or finds it) with the limit given, none for nil, and returns its `cgroup.procs`, which
    /// a process of the app joins before exec.
    func prepare(app key: String, limitBytes: Int64?) throws -> String {
        let group = try hierarchy.makeGroup(forApp: key)
        let path = try hierarchy.path(of: group)
        let limit = limitBytes.map(String.init) ?? (version == .cgroupV1 ? "-1" : "max")
        try syscalls.writeFile(CgroupHierarchy.join(path, limitFile), limit)
        return CgroupHierarchy.join(path, "cgroup.procs")
    }

    /// Writes the app's limit (none for nil) on its existing group: the kernel refuses one below what the group uses on
    /// cgroup v1 (EBUSY), and on cgroup2 reclaims, then ends a process, to meet it.
    func setLimit(app key: String, limitBytes: Int64?) throws {
        let limit = limitBytes.map(String.init) ?? (version == .cgroupV1 ? "-1" : "max")
        try syscalls.writeFile(CgroupHierarchy.join(try directory(of: key), limitFile), limit)
    }

    /// Moves a process started elsewhere, and its descendants, into the app's group.
    func adopt(pid: Int32, app key: String) throws {
        try hierarchy.adopt(pid: pid, intoDirectory: try directory(of: key))
    }

    /// The bytes the app's group uses now (its processes' memory and the page cache charged to it); nil when the
    /// group cannot be read.
    func usageBytes(app key: String) -> Int64? {
        guard let path = try? directory(of: key),
            let text = try? syscalls.readFile(CgroupHierarchy.join(path, usageFile))
        else { return nil }
        return text.split(whereSeparator: \.isWhitespace).first.flatMap { Int64($0) }
    }

    /// How many of the app's processes the kernel ended for memory since its group was made; nil when unreadable.
    func outOfMemoryKills(app key: String) -> Int? {
        guard let path = try? directory(of: key),
            let text = try? syscalls.readFile(CgroupHierarchy.join(path, eventsFile))
        else { return nil }
        return Self.outOfMemoryKills(events: text)
    }

    /// `oom_kill N` of `memory.oom_control` (v1) or `memory.events` (cgroup2).
    static func outOfMemoryKills(events text: String) -> Int? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, fields[0] == "oom_kill" { return Int(fields[1]) }
        }
        return nil
    }

    /// Removes the app's group if it is empty.
    func remove(app key: String) {
        guard let path = try? directory(of: key) else { return }
        hierarchy.remove(directory: path)
    }

    /// Removes every empty group of this instance, then the instance's directory.
    func removeAll() {
        hierarchy.removeAll()
    }

    private func directory(of key: String) throws -> String {
        CgroupHierarchy.join(hierarchy.instancePath, try CgroupName.escape(key))
    }
}
