import OffstageCore

/// Memory on virtual time (SPEC MEM-1, MEM-2): the apps' memory and the machine's pressure as the daemon reads them,
/// warnings by hand, the kernel's memory controller ending an app over its manifest's limit, and the daemon's own
/// reading where there is no controller.
extension Simulation {
    /// The kernel's memory controller ends the app's process (SIGKILL) because it outgrew its manifest's limit, and the
    /// shell, seeing the group's out-of-memory count rise, says so with the exit. An app without a limit, or without
    /// a process, is left alone.
    public mutating func memoryLimitKill(of id: AppID) {
        guard core.apps[id]?.app.manifest.linux.memoryLimitMB != nil,
            let pid = processes.values.first(where: { $0.app == id })?.pid
        else { return }
        exitNow(pid, .signaled(9), outOfMemory: true)
    }

    /// The daemon, watching the limits itself, read `bytes` of the app's memory.
    public mutating func memoryRead(of id: AppID, bytes: Int64) {
        guard let pid = processes.values.first(where: { $0.app == id })?.pid else { return }
        perform(core.memoryOverLimit(id, pid: pid, bytes: bytes, at: now))
    }

    /// The daemon read the machine's memory pressure: `level`, changed or not (while memory is short it reads after
    /// every app ended).
    public mutating func memoryPressureRead(_ level: MemoryPressure) {
        perform(core.memoryPressureRead(level, at: now))
    }

    /// The daemon measured the apps' memory, in bytes.
    public mutating func measureMemory(_ readings: [AppID: Int64]) {
        core.noteMemory(readings)
    }

    /// `offstage memory-warning [APP_ID]`: returns how many apps were warned.
    @discardableResult
    public mutating func memoryWarning(_ id: AppID?) throws(CoreError) -> Int {
        let (warned, actions) = try core.simulateMemoryWarning(id, at: now)
        perform(actions)
        return warned
    }
}
