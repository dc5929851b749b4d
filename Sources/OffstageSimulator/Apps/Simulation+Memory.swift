import OffstageCore

/// Memory on virtual time (SPEC MEM-1, MEM-2): the apps' memory and the machine's pressure as the daemon reads them,
/// warnings by hand, the kernel's memory controller ending an app over its manifest's limit, and the daemon's own
/// reading where there is no controller.
extension Simulation {
    /// The kernel's memory controller ends the app's process (SIGKILL) because it outgrew its manifest's limit, and the
    /// shell, seeing the group's out-of-memory count rise, says so with the exit. An app without a limit, or without
    /// a process, is left alone.
    public mutating func memoryLimitKill(of id: AppID) {
        guard core.memoryLimit(of: id) != nil, let pid = processes.values.first(where: { $0.app == id })?.pid
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

/// The device's memory on virtual time (``VirtualMemory``): each process takes its app's ``MemoryBehavior``, the app in
/// front grows, the pressure is graded and handed to the core as the daemon hands the budget's readings — at each
/// crossing of a threshold, after each exit, and at every accounting while memory is short — and the core's answer
/// (warnings, apps ended in the ending order) is carried out on the simulated processes. An app over its manifest's
/// limit is ended as the kernel would end it.
extension Simulation {
    /// Models the device's memory from now on: every running process takes its launch size at once.
    public mutating func enableMemory(_ memory: VirtualMemory) {
        var memory = memory
        memory.megabytes = [:]
        for process in processes.values { memory.megabytes[process.pid] = behavior(process.app).memory.launchMB }
        virtualMemory = memory
        readMemory(force: true)
        scheduleAccounting()
    }

    /// The apps ended for memory so far, in order: what a device of this size would lose.
    public var endedForMemory: [AppID] {
        log.filter { $0.kind == .kill && $0.message.hasPrefix("ended for memory") }.compactMap(\.app)
    }

    mutating func memoryLaunched(_ pid: Int32, app id: AppID) {
        guard virtualMemory != nil else { return }
        let megabytes = behavior(id).memory.launchMB
        virtualMemory?.megabytes[pid] = megabytes
        readMemory(force: false)
        scheduleAccounting()
    }

    mutating func memoryExited(_ pid: Int32) {
        guard virtualMemory?.megabytes[pid] != nil else { return }
        virtualMemory?.megabytes[pid] = nil
        readMemory(force: false)
    }

    /// The app lets go of its share of what it took beyond its launch size.
    mutating func memoryWarned(_ pid: Int32, app id: AppID) {
        guard let taken = virtualMemory?.megabytes[pid] else { return }
        let behavior = self.behavior(id).memory
        let beyond = max(0, taken - behavior.launchMB)
        virtualMemory?.megabytes[pid] = taken - beyond * min(1, max(0, behavior.freedOnWarning))
        readMemory(force: false)
    }

    /// One accounting: the apps in front that run grow, an app over its limit is ended by the "kernel", the pressure is
    /// read.
    mutating func accountMemory() {
        virtualMemory?.accounting = false
        guard let memory = virtualMemory else { return }
        let seconds = memory.accountEvery.inSeconds
        for (pid, process) in processes.sorted(by: { $0.key < $1.key }) {
            guard var taken = virtualMemory?.megabytes[pid] else { continue }
            if !process.frozen, core.apps[process.app]?.process?.phase.isForeground == true {
                let memoryBehavior = behavior(process.app).memory
                taken = min(taken + memoryBehavior.growthMBPerSecondInFront * seconds, max(taken, memoryBehavior.maximumMB ?? .infinity))
                virtualMemory?.megabytes[pid] = taken
            }
            // Over the limit in force (its manifest's, or out of front the background one): the kernel ends it.
            if let limit = core.memoryLimit(of: process.app), taken > Double(limit.megabytes) { memoryLimitKill(of: process.app) }
        }
        readMemory(force: core.memory.episode != nil)
        scheduleAccounting()
    }

    /// Hands the core the apps' memory and the level, when the level changed (the kernel's crossing) or `force`.
    mutating func readMemory(force: Bool) {
        guard var memory = virtualMemory else { return }
        let used = memory.usedMB
        memory.peakMB = max(memory.peakMB, used)
        let level = memory.level(usedMB: used)
        let changed = level != memory.level
        memory.level = level
        virtualMemory = memory
        guard changed || force || core.memory.episode != nil else { return }
        var readings: [AppID: Int64] = [:]
        for (pid, megabytes) in memory.megabytes {
            if let app = processes[pid]?.app { readings[app] = Int64(megabytes * 1_048_576) }
        }
        measureMemory(readings)
        memoryPressureRead(level)
    }

    /// Schedules the next accounting while any process runs.
    mutating func scheduleAccounting() {
        guard let memory = virtualMemory, !memory.accounting, !processes.isEmpty else { return }
        virtualMemory?.accounting = true
        queue.schedule(.accountMemory, at: now + memory.accountEvery)
    }
}
