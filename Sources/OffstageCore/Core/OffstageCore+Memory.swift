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
        guard let entry = apps[id], let process = entry.process, process.pid == pid,
            let limit = entry.app.manifest.linux.memoryLimitMB, let bytesAllowed = entry.app.manifest.linux.memoryLimitBytes,
            bytes > bytesAllowed
        else { return finish(now) }
        terminate(id, .memoryLimitExceeded(megabytes: limit), .immediate, now)
        return finish(now)
    }

    /// Remembers that the apps the input touched and that are in front were used now.
    mutating func noteUse(_ now: Instant) {
        for id in perAppStale where apps[id]?.process?.phase.isForeground == true {
            apps[id]?.process?.lastInFront = now
        }
    }
}
