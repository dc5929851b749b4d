/// One line of `/proc/PID/cgroup`: `hierarchy-ID:controller-list:cgroup-path`.
public struct ProcessCgroupEntry: Sendable, Hashable {
    /// 0 for the cgroup v2 hierarchy, else the v1 hierarchy id.
    public let hierarchyID: Int
    /// The v1 controllers of the hierarchy (`freezer`, `cpu,cpuacct`, `name=systemd`); empty for v2.
    public let controllers: [String]
    /// The cgroup path relative to the root of the hierarchy in the process's cgroup namespace.
    public let path: String

    /// Creates an entry.
    public init(hierarchyID: Int, controllers: [String], path: String) {
        self.hierarchyID = hierarchyID
        self.controllers = controllers
        self.path = path
    }

    /// Whether this is the cgroup v2 line.
    public var isUnified: Bool { hierarchyID == 0 && controllers.isEmpty }

    /// Parses the text of a `/proc/PID/cgroup` file.
    public static func parse(_ text: String) -> [ProcessCgroupEntry] {
        text.split(separator: "\n").compactMap { line in
            // The path may contain ':' itself, so split only twice.
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, let id = Int(parts[0]) else { return nil }
            let controllers = parts[1].split(separator: ",").map(String.init)
            return ProcessCgroupEntry(hierarchyID: id, controllers: controllers, path: String(parts[2]))
        }
    }
}
