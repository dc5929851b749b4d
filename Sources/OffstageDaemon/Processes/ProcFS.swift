import Glibc

/// Small readers of `/proc`. Every reader returns nil (or empty) when the process is gone, because a process can
/// exit between any two reads and callers treat that as "not there".
public struct ProcFS: Sendable {
    let syscalls: Syscalls

    /// Reads the real `/proc`.
    public init() {
        self.syscalls = .live
    }

    init(syscalls: Syscalls) {
        self.syscalls = syscalls
    }

    /// Clock ticks per second, the unit of the CPU and start times in `/proc/PID/stat`.
    public static let clockTicksPerSecond: Int = {
        let ticks = sysconf(Int32(_SC_CLK_TCK))
        return ticks > 0 ? ticks : 100
    }()

    /// Parses the text of `/proc/PID/stat`.
    ///
    /// The command name sits between the first `(` and the last `)`: it may contain spaces and parentheses, so
    /// the numeric fields are found after the last `)`.
    public static func parseStat(_ text: String) -> ProcessStat? {
        let bytes = Array(text.utf8)
        guard let open = bytes.firstIndex(of: UInt8(ascii: "(")),
            let close = bytes.lastIndex(of: UInt8(ascii: ")")), open < close,
            let pid = Int32(String(decoding: bytes[..<open], as: UTF8.self).trimmingSpaces())
        else { return nil }
        let command = String(decoding: bytes[(open + 1)..<close], as: UTF8.self)
        // Fields from (3) state on.
        let rest = String(decoding: bytes[(close + 1)...], as: UTF8.self).split(separator: " ")
        guard rest.count >= 20, let stateCharacter = rest[0].first,
            let parent = Int32(rest[1]), let group = Int32(rest[2]), let session = Int32(rest[3]),
            let user = UInt64(rest[11]), let system = UInt64(rest[12]),
            let start = UInt64(rest[19].trimmingSpaces())
        else { return nil }
        return ProcessStat(
            pid: pid, command: command, state: stateCharacter, parentPid: parent, processGroup: group,
            session: session, userTicks: user, systemTicks: system, startTime: start)
    }

    /// The parsed `/proc/PID/stat`.
    public func stat(of pid: Int32) -> ProcessStat? {
        guard pid > 0, let text = try? syscalls.readFile("/proc/\(pid)/stat") else { return nil }
        return Self.parseStat(text)
    }

    /// Start time in clock ticks after boot.
    public func startTime(of pid: Int32) -> UInt64? { stat(of: pid)?.startTime }

    /// User plus kernel CPU time in seconds.
    public func cpuSeconds(of pid: Int32) -> Double? {
        stat(of: pid).map { Double($0.cpuTicks) / Double(Self.clockTicksPerSecond) }
    }

    /// The state letter (R, S, D, T, t, Z, ...).
    public func state(of pid: Int32) -> Character? { stat(of: pid)?.state }

    /// The parent process id.
    public func parentPid(of pid: Int32) -> Int32? { stat(of: pid)?.parentPid }

    /// The process group id.
    public func processGroup(of pid: Int32) -> Int32? { stat(of: pid)?.processGroup }

    /// The path of the running executable.
    public func executablePath(of pid: Int32) -> String? {
        try? syscalls.readlink("/proc/\(pid)/exe")
    }

    /// The lines of `/proc/PID/cgroup`.
    public func cgroups(of pid: Int32) -> [ProcessCgroupEntry] {
        guard pid > 0, let text = try? syscalls.readFile("/proc/\(pid)/cgroup") else { return [] }
        return ProcessCgroupEntry.parse(text)
    }

    /// Whether the process exists, has not finished (zombie) and, if `startTime` is given, is the same process
    /// and not a later one that reused the pid.
    public func isAlive(pid: Int32, startTime: UInt64? = nil) -> Bool {
        guard let stat = stat(of: pid), !stat.isZombie else { return false }
        return startTime == nil || stat.startTime == startTime
    }

    /// Every process id currently in `/proc`.
    public func allPids() -> [Int32] {
        ((try? syscalls.listDirectory("/proc")) ?? []).compactMap { Int32($0) }
    }

    /// The stat of every process, for walking process trees.
    public func allStats() -> [ProcessStat] {
        allPids().compactMap { stat(of: $0) }
    }
}

extension StringProtocol {
    fileprivate func trimmingSpaces() -> String {
        String(
            self.drop(while: { $0 == " " || $0 == "\n" }).reversed().drop(while: { $0 == " " || $0 == "\n" }).reversed()
        )
    }
}
