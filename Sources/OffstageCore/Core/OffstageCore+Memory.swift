/// Memory (SPEC MEM-1): where each running app stands when memory is short. The core decides the order; a shell that
/// must free memory ends apps in it.
extension OffstageCore {
    /// The band of an app's process now; nil when it has none.
    public func memoryBand(of id: AppID, at now: Instant) -> MemoryBand? {
        guard let entry = apps[id], let process = entry.process else { return nil }
        if process.phase.isForeground { return .foreground }
        if process.frozen || process.phase == .suspended { return .suspended }
        // What the user hears or sees: audio playing (what the user started counts even where the mode is denied: it
        // plays until the app is suspended, as for its traffic, SET-2), locations delivered, a continued task.
        let audio = modes.audio.session(of: id)
        let userAudio = audio.map { $0.active && $0.playing && $0.startedByUser } ?? false
        let held = modeHolds(of: id, at: now).filter { $0.verdict == .holds }.map(\.mode)
        if userAudio || held.contains(.audio) || held.contains(.location)
            || process.runs.contains(where: { $0.request.kind == .continued })
        {
            return .backgroundUser
        }
        return .backgroundWork
    }

    /// Where an app's process stands now; nil when it has none.
    public func memoryStanding(of id: AppID, at now: Instant) -> MemoryStanding? {
        guard let entry = apps[id], let process = entry.process, let band = memoryBand(of: id, at: now) else { return nil }
        return MemoryStanding(
            app: id, band: band, keptInMemory: entry.app.settings.keptInMemory,
            lastUsed: process.lastInFront ?? process.startedAt)
    }

    /// Every app with a process, in the order they would be ended when memory stays short: the first is ended first.
    public func memoryEndingOrder(at now: Instant) -> [MemoryStanding] {
        MemoryStanding.endingOrder(apps.keys.compactMap { memoryStanding(of: $0, at: now) })
    }

    /// The daemon read a running app's memory above its manifest's limit where no memory controller enforces the
    /// limit (SPEC MEM-2): the app is ended at once, as the kernel would have ended it, and the reason says so. A
    /// reading at or under the limit, of another process, or of an app without a limit changes nothing.
    public mutating func memoryOverLimit(_ id: AppID, pid: Int32, bytes: Int64, at now: Instant) -> [CoreAction] {
        guard let process = apps[id]?.process, process.pid == pid, process.termination == nil,
            let limit = memoryLimit(of: id), bytes > limit.bytes
        else { return finish(now) }
        terminate(id, limit.reason, .immediate, now)
        return finish(now)
    }

    /// The memory limit in force for the app's process now (SPEC MEM-2): its manifest's `MemoryLimitMB`, and out of front
    /// `memory.backgroundLimitMB` where that is set and smaller; nil when neither applies (or the app has no process).
    public func memoryLimit(of id: AppID) -> MemoryLimit? {
        guard let entry = apps[id], let process = entry.process else { return nil }
        let manifest = entry.app.manifest.linux.memoryLimitMB
        guard !process.phase.isForeground, let background = configuration.memory.backgroundLimitMB,
            background < manifest ?? .max
        else { return manifest.map { MemoryLimit(megabytes: $0, inBackground: false) } }
        return MemoryLimit(megabytes: background, inBackground: true)
    }

    // MARK: The response to memory pressure (SPEC MEM-1)

    /// The user (`offstage memory-warning`) or a test sends a memory warning to one running app, or to every one:
    /// `applicationDidReceiveMemoryWarning`, as the device does when memory gets short, and nothing else. Returns how
    /// many apps were warned. A suspended app hears nothing (it would not on a phone); one that does not run is refused.
    public mutating func simulateMemoryWarning(
        _ only: AppID?, at now: Instant
    ) throws(CoreError) -> (warned: Int, actions: [CoreAction]) {
        if let only {
            guard let entry = apps[only] else {
                throw CoreError(.appNotInstalled, "app '\(only)' is not installed", fix: "install it, or name an installed app")
            }
            guard let process = entry.process, process.termination == nil else {
                throw CoreError(
                    .appNotRunning, "app '\(only)' is not running", fix: "open it first: only a running app gets memory warnings")
            }
            guard !process.frozen else {
                throw CoreError(
                    .appNotRunning, "app '\(only)' is suspended: a suspended app gets no memory warning (SPEC MEM-1)",
                    fix: "open it first, or warn an app that runs")
            }
        }
        let warned = warnAboutMemory(only, because: "simulated", now)
        return (warned, finish(now))
    }

    /// The shell read the machine's memory pressure (SPEC MEM-1): when the kernel says it rose, and while memory is short
    /// after each app ended and at a short interval. Unlike ``machineReadingChanged(_:at:)`` a level that did not change
    /// counts too: it says memory is still short once the last app's memory was freed, so the next may be ended.
    public mutating func memoryPressureRead(_ level: MemoryPressure?, at now: Instant) -> [CoreAction] {
        memory.readingTaken()
        if device.machine.memoryPressure != level {
            var reading = device.machine
            reading.memoryPressure = level
            return machineReadingChanged(reading, at: now)
        }
        return finish(now)
    }

    /// Whether the response ends an app now.
    func memoryEndingDue(_ now: Instant) -> Bool {
        memory.endingDue(at: now, configuration.memory, given: device.overrides.memoryPressure != nil)
    }

    /// When the response next looks at the order, if memory is short.
    var nextMemoryEnding: Instant? {
        memory.nextEnding(configuration.memory, given: device.overrides.memoryPressure != nil)
    }

    /// What the daemon measured of running apps' memory, in bytes: recorded with an app ended for memory (SPEC MEM-1).
    public mutating func noteMemory(_ readings: [AppID: Int64]) {
        for (id, bytes) in readings where apps[id]?.process != nil { apps[id]?.process?.memoryBytes = bytes }
    }

    /// Answers the memory pressure now: called after every change of the conditions. A rise warns the running apps;
    /// relief ends the episode. Pressure that stays past the grace ends apps (``endForMemoryIfDue(_:)``, at the end of
    /// every input).
    mutating func respondToMemoryPressure(_ now: Instant) {
        let level = conditions(at: now).memoryPressure
        switch memory.read(level, at: now) {
        case .warn:
            warnAboutMemory(nil, because: "memory pressure \(level.rawValue)", now)
        case .relieved(let over):
            let seconds = format((now - over.began).inSeconds)
            let ended = over.ended.isEmpty ? "no app ended" : "ended \(over.ended.map { "'\($0)'" }.joined(separator: ", "))"
            log(now, nil, .device, "memory pressure relieved after \(seconds) s; \(ended)")
            for id in over.relaunchWhenRelieved.sorted() {
                guard let entry = apps[id], entry.process == nil, let at = voipRelaunch(entry, .signaled(9), now) else { continue }
                modes.voip.relaunch(id, at: at)
                scheduleAgain(id)
            }
        case .unchanged:
            break
        }
    }

    /// Ends the first app of the ending order if the response says one is due: memory has stayed short past the grace
    /// and the interval, and a reading taken since the last one ended says so still. One per input.
    mutating func endForMemoryIfDue(_ now: Instant) {
        guard memoryEndingDue(now), let level = memory.episode?.level else { return }
        let order = memoryEndingOrder(at: now).filter { apps[$0.app]?.process?.termination == nil }
        guard let next = order.first else {
            memory.nobodyLeft()
            return
        }
        let megabytes = apps[next.app]?.process?.memoryBytes.map { Int(($0 + (1 << 19)) >> 20) }
        terminate(next.app, .memoryPressure(pressure: level, band: next.band, megabytes: megabytes), .immediate, now)
        memory.ended(next.app, at: now)
    }

    /// Queues `applicationDidReceiveMemoryWarning` for the apps that run (not frozen, not ending); returns how many.
    @discardableResult
    mutating func warnAboutMemory(_ only: AppID?, because reason: String, _ now: Instant) -> Int {
        var warned = 0
        for id in only.map({ [$0] }) ?? apps.keys.sorted() {
            guard let process = apps[id]?.process, process.termination == nil, !process.frozen else { continue }
            if !process.queue.contains(.memoryWarning) { enqueue(id, .memoryWarning) }
            warned += 1
        }
        if warned > 0 || only == nil {
            log(now, only, .device, "memory warning (\(reason)) for \(only.map { "'\($0)'" } ?? "\(warned) running app(s)")")
        }
        return warned
    }

    /// Remembers that the apps the input touched and that are in front were used now.
    mutating func noteUse(_ now: Instant) {
        for id in perAppStale where apps[id]?.process?.phase.isForeground == true {
            apps[id]?.process?.lastInFront = now
        }
    }
}
