/// Where the cgroup hierarchies the freezers need are mounted, read from `/proc/self/mountinfo`.
///
/// The layout differs between machines (pure v2 at `/sys/fs/cgroup`, hybrid with v2 at `/sys/fs/cgroup/unified`
/// beside v1 controllers, v1 only, none at all in some containers), so nothing is assumed about paths.
public struct CgroupMounts: Sendable, Hashable {
    /// One mounted cgroup hierarchy.
    public struct Mount: Sendable, Hashable {
        /// Where it is mounted, for example `/sys/fs/cgroup/unified`.
        public let mountPoint: String
        /// The cgroup of the hierarchy shown at the mount point (`/` unless a container mounted a subtree); the
        /// paths in `/proc/PID/cgroup` start with it.
        public let root: String
        /// Whether the mount is read-only (then no cgroup can be created under it).
        public let isReadOnly: Bool

        /// Creates a mount description.
        public init(mountPoint: String, root: String, isReadOnly: Bool) {
            self.mountPoint = mountPoint
            self.root = root
            self.isReadOnly = isReadOnly
        }
    }

    /// The cgroup v2 (unified) hierarchy, if mounted.
    public let unified: Mount?
    /// The cgroup v1 hierarchy that carries the `freezer` controller, if mounted.
    public let freezer: Mount?
    /// The cgroup v1 hierarchy that carries the `memory` controller, if mounted (on a pure cgroup2 machine the memory
    /// controller is in the unified hierarchy instead: its root's `cgroup.controllers` says so).
    public let memory: Mount?

    /// Creates a value from known mounts.
    public init(unified: Mount?, freezer: Mount?, memory: Mount? = nil) {
        self.unified = unified
        self.freezer = freezer
        self.memory = memory
    }

    /// The mounts of the calling process; none when mountinfo cannot be read.
    public static func current() -> CgroupMounts {
        current(syscalls: .live)
    }

    static func current(syscalls: Syscalls) -> CgroupMounts {
        guard let text = try? syscalls.readFile("/proc/self/mountinfo") else {
            return CgroupMounts(unified: nil, freezer: nil, memory: nil)
        }
        return parse(mountInfo: text)
    }

    /// Parses the text of a `mountinfo` file (proc(5)); the first mount of each kind wins.
    public static func parse(mountInfo text: String) -> CgroupMounts {
        var unified: Mount?
        var freezer: Mount?
        var memory: Mount?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // id parent major:minor root mount-point options [optional...] - fstype source super-options
            guard fields.count >= 10, let separator = fields.firstIndex(of: "-"), separator >= 6,
                separator + 3 < fields.count
            else { continue }
            let fileSystem = fields[separator + 1]
            let root = unescape(fields[3])
            let mountPoint = unescape(fields[4])
            let mountOptions = fields[5].split(separator: ",")
            let superOptions = fields[separator + 3].split(separator: ",")
            let readOnly = mountOptions.contains("ro") || superOptions.contains("ro")
            let mount = Mount(mountPoint: mountPoint, root: root, isReadOnly: readOnly)
            if fileSystem == "cgroup2", unified == nil {
                unified = mount
            } else if fileSystem == "cgroup", freezer == nil, superOptions.contains("freezer") {
                freezer = mount
            }
            if fileSystem == "cgroup", memory == nil, superOptions.contains("memory") {
                memory = mount
            }
        }
        return CgroupMounts(unified: unified, freezer: freezer, memory: memory)
    }

    // mountinfo writes space, tab, newline and backslash in paths as three-digit octal escapes.
    private static func unescape(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        let source = Array(field.utf8)
        var index = 0
        while index < source.count {
            if source[index] == UInt8(ascii: "\\"), index + 3 < source.count,
                let value = UInt8(String(decoding: source[(index + 1)...(index + 3)], as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(source[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
