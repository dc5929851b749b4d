import OffstageCore

/// Reads what an app's processes used so far (SPEC SET-3): CPU time from its cgroup where it has one of cgroup v2
/// (`cpu.stat`, which keeps the time of processes that have exited), else the sum of its live processes' times from
/// `/proc`; memory from its group under the kernel's memory controller where it has one (SPEC MEM-1: one file read, what
/// the kernel's limit counts), else as the sum of its processes' proportional set size (`smaps_rollup`), which shares a
/// library's pages fairly between the processes that map it.
struct AppResourceReader: Sendable {
    let procFS: ProcFS
    let syscalls: Syscalls
    /// The apps' memory groups, where the memory controller is used.
    let memory: MemoryCgroups?

    init(syscalls: Syscalls = .live, memory: MemoryCgroups? = nil) {
        self.syscalls = syscalls
        self.procFS = ProcFS(syscalls: syscalls)
        self.memory = memory
    }

    /// Memory of a running app (with `members`) in bytes: its memory group's, else its processes' PSS; nil when it
    /// runs no process or none could be read.
    func memoryBytes(app id: AppID, members: [Int32]) -> Int64? {
        guard !members.isEmpty else { return nil }
        return memory?.usageBytes(app: id.rawValue) ?? memoryBytes(members: members)
    }

    /// CPU time used by the app's processes, in microseconds; nil when it cannot be read.
    func cpuMicroseconds(group: AppGroup, members: [Int32]) -> Int64? {
        if group.kind == .cgroupV2, let path = group.cgroupPath,
            let text = try? syscalls.readFile(path + "/cpu.stat"), let usage = Self.usageMicroseconds(cpuStat: text)
        {
            return usage
        }
        guard !members.isEmpty else { return nil }
        let ticks = members.compactMap { procFS.stat(of: $0)?.cpuTicks }.reduce(UInt64(0), &+)
        return Int64(clamping: ticks) * 1_000_000 / Int64(ProcFS.clockTicksPerSecond)
    }

    /// Memory of the app's processes in bytes (the sum of their PSS); nil when none could be read.
    func memoryBytes(members: [Int32]) -> Int64? {
        let sizes = members.compactMap { pid -> Int64? in
            guard let text = try? syscalls.readFile("/proc/\(pid)/smaps_rollup") else { return nil }
            return Self.pssBytes(smapsRollup: text)
        }
        return sizes.isEmpty ? nil : sizes.reduce(0, &+)
    }

    /// `usage_usec` of a cgroup v2 `cpu.stat`.
    static func usageMicroseconds(cpuStat text: String) -> Int64? {
        value(of: "usage_usec", in: text, separator: " ")
    }

    /// The `Pss:` line of `/proc/PID/smaps_rollup`, in bytes.
    static func pssBytes(smapsRollup text: String) -> Int64? {
        value(of: "Pss:", in: text, separator: nil).map { $0 &* 1024 }
    }

    /// The number after `key` on the line that starts with it.
    private static func value(of key: String, in text: String, separator: Character?) -> Int64? {
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            let rest = line.dropFirst(key.count)
            if let separator, rest.first != separator { continue }
            let digits = rest.drop { $0 == " " || $0 == "\t" }.prefix { $0.isNumber }
            return Int64(digits)
        }
        return nil
    }
}
