import NIOCore
import OffstageCore

/// The engine's side of the memory service (SPEC MEM-2): the app's memory group before a launch, and the daemon's own reading of limited apps where the kernel does not enforce their limits.
extension DaemonEngine {
    /// Before a launch: the app's memory group with the limit in force for it (its manifest's, or the background one
    /// for a launch into the background); the `cgroup.procs` files its process joins.
    func memoryGroupsForLaunch(_ id: AppID) -> [String] {
        memory.prepareLaunch(id, limitBytes: core.memoryLimit(of: id)?.bytes)
    }

    /// With a background memory limit (`memory.backgroundLimitMB`), writes each running app's limit when the one in
    /// force changes (it left the front, or came back), after every input; where the daemon watches the limits itself,
    /// keeps its reading going while an app has one. An app already over the smaller limit when it
    /// leaves the front is ended: the kernel refuses a limit below what the group uses (cgroup v1), and the daemon hands
    /// the core what it read.
    func followMemoryLimits() {
        guard core.configuration.memory.backgroundLimitMB != nil else { return }
        guard let cgroups = memory.cgroups else {
            // Watched by the daemon: an app that left the front may now have a limit to read it against.
            watchMemoryLimits()
            return
        }
        var over: [(AppID, Int32, Int64)] = []
        for (pid, id) in appsByPid where core.apps[id]?.process?.termination == nil {
            let limit = core.memoryLimit(of: id)?.bytes
            guard memory.writtenLimits[id] != .some(limit) else { continue }
            do {
                try cgroups.setLimit(app: id.rawValue, limitBytes: limit)
                memory.writtenLimits[id] = limit
            } catch {
                guard let limit, let used = cgroups.usageBytes(app: id.rawValue), used > limit else { continue }
                over.append((id, pid, used))
            }
        }
        guard !over.isEmpty else { return }
        // After this input's bookkeeping: the core ends them as its next input.
        eventLoop.execute { [self, over] in
            for (id, pid, used) in over { apply(core.memoryOverLimit(id, pid: pid, bytes: used, at: now)) }
        }
    }

    /// Keeps the daemon reading limited apps' memory while one runs whose limit the kernel does not enforce, and stops
    /// it when none does: no wake-up otherwise.
    func watchMemoryLimits() {
        let watched = appsByPid.values.contains { id in memory.watches(id) && core.memoryLimit(of: id) != nil }
        guard watched else {
            memory.watch?.cancel()
            memory.watch = nil
            return
        }
        guard memory.watch == nil else { return }
        let interval = TimeAmount.nanoseconds(Int64(configuration.daemon.memoryWatchInterval * 1e9))
        memory.watch = eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [self] _ in
            readWatchedMemory()
        }
    }

    /// Reads each running limited app's memory (the PSS of its processes) and hands one over its limit to the core,
    /// which ends it.
    private func readWatchedMemory() {
        for (pid, id) in appsByPid.sorted(by: { $0.key < $1.key }) {
            guard memory.watches(id), let limit = core.memoryLimit(of: id)?.bytes, let group = groups[id],
                let bytes = memory.reader.memoryBytes(members: control.members(of: group, leader: pid)), bytes > limit
            else { continue }
            apply(core.memoryOverLimit(id, pid: pid, bytes: bytes, at: now))
        }
        watchMemoryLimits()
    }

    // MARK: The response to memory pressure (SPEC MEM-1)

    /// Whether memory pressure and the thermal state are read at the poll interval: while the core depends on them,
    /// and while an app runs where the kernel cannot wake the daemon when memory pressure rises.
    var pressureWanted: Bool {
        core.dependsOnDevicePressure || (machineWatcher?.wakeUps.isEmpty == true && !appsByPid.isEmpty)
    }

    /// Where memory pressure comes from and when it is read, for `offstage status`.
    var memoryPressureDetail: String {
        guard let watcher = machineWatcher, let reader = watcher.reader.memory else {
            return "not read from the machine (set it with `offstage device --memory-pressure`)"
        }
        let level = core.conditions(at: now).memoryPressure.rawValue
        let settings = configuration.daemon.machinePressure
        let budget = memory.budgetProblem.map { "; the app memory budget is not in force: \($0)" } ?? ""
        return "\(level) (\(reader.reading().source)); \(OffstageDaemonService.memoryWakeUpsDetail(watcher.wakeUps, settings))"
            + budget
    }

    /// Hands the core each running app's memory now (its group's count, else its latest reading), so that an app ended
    /// for memory is recorded with it. Only while memory is short or about to be: a file read per running app.
    func noteAppMemory() {
        let latest = memory.cgroups == nil ? usage.latestMemory() : [:]
        var readings: [AppID: Int64] = [:]
        for id in Set(appsByPid.values) {
            if let bytes = memory.cgroups?.usageBytes(app: id.rawValue) ?? latest[id] { readings[id] = bytes }
        }
        core.noteMemory(readings)
    }

    /// A reading of the machine: with the apps' memory first when memory is short, or becomes so.
    func machineRead(_ reading: MachineReading) {
        if core.memory.episode != nil || (reading.memoryPressure ?? .normal) > .normal { noteAppMemory() }
        apply(core.machineReadingChanged(reading, at: now))
    }

    /// A process ended while memory is short: the machine's memory is read again at once, so the response sees what the
    /// process freed before it ends another app.
    func readMemoryAfterExit() {
        guard core.memory.episode != nil, let reader = machineWatcher?.reader.memory else { return }
        noteAppMemory()
        apply(core.memoryPressureRead(reader.read(), at: now))
    }

    /// Removes what this daemon made in the kernel: its cgroup folders (each left empty; one with processes inside
    /// stays) and its nftables table.
    func removeKernelState() {
        control.removeAll()
        memory.removeAll()
        network.stop()
    }
}
