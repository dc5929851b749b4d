/// The fields of `/proc/PID/stat` the daemon uses (proc(5) numbering in the comments).
public struct ProcessStat: Sendable, Hashable {
    /// (1) The process id.
    public let pid: Int32
    /// (2) The command name, without the parentheses; may itself contain spaces and parentheses.
    public let command: String
    /// (3) R running, S sleeping, D disk sleep, T stopped, t tracing stop, Z zombie, X dead, I idle.
    public let state: Character
    /// (4) The parent process id.
    public let parentPid: Int32
    /// (5) The process group id.
    public let processGroup: Int32
    /// (6) The session id.
    public let session: Int32
    /// (14) User-mode CPU time in clock ticks.
    public let userTicks: UInt64
    /// (15) Kernel-mode CPU time in clock ticks.
    public let systemTicks: UInt64
    /// (22) Start time in clock ticks after boot; with the pid it identifies a process across pid reuse.
    public let startTime: UInt64

    /// Creates a value.
    public init(
        pid: Int32, command: String, state: Character, parentPid: Int32, processGroup: Int32, session: Int32,
        userTicks: UInt64, systemTicks: UInt64, startTime: UInt64
    ) {
        self.pid = pid
        self.command = command
        self.state = state
        self.parentPid = parentPid
        self.processGroup = processGroup
        self.session = session
        self.userTicks = userTicks
        self.systemTicks = systemTicks
        self.startTime = startTime
    }

    /// User plus kernel CPU time in clock ticks.
    public var cpuTicks: UInt64 { userTicks + systemTicks }

    /// Whether the process has finished and only its exit status remains.
    public var isZombie: Bool { state == "Z" || state == "X" || state == "x" }

    /// Whether a signal or the tracer has stopped it.
    public var isStopped: Bool { state == "T" || state == "t" }
}
