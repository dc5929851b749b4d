import OffstageCore

/// Memory limits on virtual time (SPEC MEM-2): the kernel's memory controller ending an app over its manifest's limit,
/// and the daemon's own reading where there is no controller.
extension Simulation {
    /// The kernel's memory controller ends the app's process (SIGKILL) because it outgrew its manifest's limit, and the
    /// shell, seeing the group's out-of-memory count rise, tells the core why. An app without a limit, or without a
    /// process, is left alone.
    public mutating func memoryLimitKill(of id: AppID) {
        guard let limit = core.apps[id]?.app.manifest.linux.memoryLimitMB,
            let pid = processes.values.first(where: { $0.app == id })?.pid
        else { return }
        exitNow(pid, .signaled(9), cause: .memoryLimitExceeded(megabytes: limit))
    }

    /// The daemon, watching the limits itself, read `bytes` of the app's memory.
    public mutating func memoryRead(of id: AppID, bytes: Int64) {
        guard let pid = processes.values.first(where: { $0.app == id })?.pid else { return }
        perform(core.memoryOverLimit(id, pid: pid, bytes: bytes, at: now))
    }
}
