import Dispatch
import Logging
import OffstageCore
import Synchronization

/// Counts what each app used (SPEC SET-3). It decides nothing: the core says what an app's use counts as (in front
/// or not, metered or not, which day, a wake-up) and when that changes; the recorder reads the app's counters — the
/// bytes of its nftables counters, the CPU time of its cgroup, the memory of its group or its processes — and the core's
/// ``UsageLedger`` adds what they moved to the context that ended.
///
/// Readings are taken on the recorder's own thread, never on a lifecycle transition's path: a change is handed over
/// in one call that only queues it, and the thread runs at a low priority (``SerialWorker``), so on a busy device
/// the readings mostly wait until the transitions are done instead of slowing them. Figures are kept in memory and
/// written to the store as one transaction at most once a ``Settings/writeInterval`` (and on a new day, on a query, at
/// a clean stop), so a busy device does not write at every transition; a daemon killed with -9 loses at most that
/// much of what it had counted (decision 0052).
final class UsageRecorder: Sendable {
    /// How usage is kept.
    struct Settings: Hashable, Sendable {
        /// Days of usage kept, today included. Default 31.
        var daysKept: Int = 31
        /// Seconds between two writes of counted figures to the store. Default 60.
        var writeInterval: Double = 60
        /// Seconds after an app is frozen before its memory is read (it does not move while the app stays frozen).
        var memoryDelay: Double = 2
    }

    /// Where an app's counters are.
    struct Source: Sendable {
        /// Its cgroup (or, for the SIGSTOP freezer, its name).
        var group: AppGroup
        /// Its main process, if one runs.
        var leader: Int32?
    }

    private struct State: Sendable {
        var ledger = UsageLedger()
        var sources: [AppID: Source] = [:]
        /// Each app's counters at its latest reading, or when they were made: where a new count starts.
        var bases: [AppID: UsageReading] = [:]
        var writtenAt: Int64 = DaemonMetrics.monotonicNanoseconds()
        /// The newest day at the last write: a later one writes at once (and drops the days no longer kept).
        var writtenDay: Int64 = .min
        /// Apps frozen since their memory was last read.
        var memoryDue: Set<AppID> = []
        /// A reading of their memory is coming.
        var memoryReadingComing = false
        var stopped = false
    }

    let settings: Settings
    private let network: NetworkFilter
    private let control: any ProcessControl
    private let reader: AppResourceReader
    private let store: OffstageStore
    private let logger: Logger
    /// Readings are never in a hurry: they run at a low priority.
    private let queue: SerialWorker
    /// Touched only on `queue`; the lock makes that checkable.
    private let state = Mutex(State())
    /// Each running app's memory at its latest reading.
    private let memoryNow = Mutex<[AppID: Int64]>([:])
    /// Counters as they stood when apps' groups were made, handed over by the loop (see ``registered(_:_:)``).
    private let madeAt = Mutex<[AppID: UsageReading]>([:])

    init(
        settings: Settings = .init(), network: NetworkFilter, control: any ProcessControl, store: OffstageStore,
        logger: Logger, reader: AppResourceReader = .init()
    ) throws {
        queue = try SerialWorker(name: "offstage-usage")
        if !queue.lowered { logger.info("the usage recorder runs at normal priority (its nice value could not be raised)") }
        self.settings = settings
        self.network = network
        self.control = control
        self.store = store
        self.logger = logger
        self.reader = reader
    }

    /// Hands over the core's change; returns at once. `sources` says where the counters of the apps it names are.
    func record(_ change: UsageChange, sources: [AppID: Source]) {
        queue.async { [self] in
            state.withLock { state in
                guard !state.stopped else { return }
                state.sources.merge(sources) { _, new in new }
                state.bases.merge(madeAt.withLock { made in defer { made = [:] }; return made }) { _, made in made }
                // No memory here: reading a process's PSS walks its page tables (about half a millisecond for a
                // small app, under the lock its own memory calls need), which would compete with the transition
                // that caused the change. It is read a little after the app is frozen (see `readDueMemory`), and by
                // queries.
                let readings = read(change.contexts.keys.sorted(), state.sources, withMemory: false)
                state.ledger.apply(change, readings: readings, bases: state.bases)
                for (id, reading) in readings { state.bases[id] = reading }
                for case (let id, nil) in change.contexts {
                    state.sources[id] = nil
                    memoryNow.withLock { $0[id] = nil }
                }
                for (id, context) in change.contexts {
                    if context?.running == false { state.memoryDue.insert(id) } else { state.memoryDue.remove(id) }
                }
                if !state.memoryDue.isEmpty, !state.memoryReadingComing {
                    state.memoryReadingComing = true
                    queue.async(after: .seconds(settings.memoryDelay)) { [self] in self.readDueMemory() }
                }
                let interval = Int64(settings.writeInterval * 1e9)
                if state.ledger.newestDay > state.writtenDay
                    || DaemonMetrics.monotonicNanoseconds() &- state.writtenAt >= interval
                {
                    write(&state)
                }
            }
        }
    }

    /// The app's group was just made, before any of its processes runs: its traffic counters start at zero, and its
    /// CPU is read now (one small file), so that its first count starts there even if the first reading comes late.
    func registered(_ id: AppID, _ group: AppGroup) {
        let base = UsageReading(received: 0, sent: 0, cpuMicroseconds: reader.cpuMicroseconds(group: group, members: []))
        madeAt.withLock { $0[id] = base }
    }

    /// Forgets an uninstalled app: what was counted for it, and its rows.
    func forget(_ id: AppID) {
        queue.async { [self] in
            state.withLock { state in
                state.ledger.forget(id)
                state.sources[id] = nil
                state.bases[id] = nil
                memoryNow.withLock { $0[id] = nil }
            }
            do { try store.deleteUsage(of: id) } catch { logger.error("could not delete the usage of \(id): \(error)") }
        }
    }

    /// What the apps (or one) used from `firstDay` on, with the running apps' counters read now.
    func usage(of app: AppID?, fromDay firstDay: Int64, at now: Instant) async throws -> OffstageStore.StoredUsage {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = queue.async { [self] in
                let result = state.withLock { state in
                    Result { () throws -> OffstageStore.StoredUsage in
                        if !state.stopped { readOpen(app.map { [$0] } ?? state.ledger.openApps, now, &state) }
                        write(&state)
                        return try stored(app, firstDay)
                    }
                }
                continuation.resume(with: result)
            }
            // Stopped (the daemon is going down): what the store holds, without reading the apps again.
            if !accepted { continuation.resume(with: Result { try stored(app, firstDay) }) }
        }
    }

    /// One app day by day, or every app summed over the window.
    private func stored(_ app: AppID?, _ firstDay: Int64) throws -> OffstageStore.StoredUsage {
        try app.map { try store.usage(of: $0, fromDay: firstDay) } ?? store.usageSummed(fromDay: firstDay)
    }

    /// Each running app's memory at its latest reading (a little after it was last frozen, or a usage query), in bytes:
    /// what `offstage apps` shows, at no cost to the call (a fresh reading of a process's PSS walks its page tables).
    func latestMemory() -> [AppID: Int64] { memoryNow.withLock { $0 } }

    /// Counts what every running app used up to now and writes it: at a clean stop, before the traffic counters go
    /// with the daemon's table and the CPU counters with the apps' groups.
    func stop(at now: Instant) {
        queue.sync { [self] in
            state.withLock { state in
                guard !state.stopped else { return }
                readOpen(state.ledger.openApps, now, &state)
                write(&state)
                state.stopped = true
            }
        }
        queue.stop()
    }

    deinit { queue.stop() }

    // MARK: On the recorder's thread

    /// Reads the memory of the apps frozen since their last reading, while they stay frozen: it does not move then, so
    /// reading it later loses nothing, and no transition waits beside it.
    private func readDueMemory() {
        state.withLock { state in
            state.memoryReadingComing = false
            guard !state.stopped else { return }
            for id in state.memoryDue.sorted() {
                guard let source = state.sources[id], let leader = source.leader,
                    let bytes = reader.memoryBytes(app: id, members: control.members(of: source.group, leader: leader))
                else { continue }
                state.ledger.recordMemory(id, bytes: bytes)
                memoryNow.withLock { $0[id] = bytes }
            }
            state.memoryDue = []
        }
    }

    private func readOpen(_ ids: [AppID], _ now: Instant, _ state: inout State) {
        let readings = read(ids, state.sources, withMemory: true)
        state.memoryDue.subtract(ids)
        state.ledger.readOpen(ids, at: now, readings: readings)
        for (id, reading) in readings { state.bases[id] = reading }
    }

    /// Reads the counters of the apps given: their traffic in one netlink exchange, their CPU one by one, and their
    /// memory `withMemory`.
    private func read(_ ids: [AppID], _ sources: [AppID: Source], withMemory: Bool) -> [AppID: UsageReading] {
        let bytes = network.counters(of: ids)
        var readings: [AppID: UsageReading] = [:]
        for id in ids {
            var reading = UsageReading(received: bytes[id]?.received, sent: bytes[id]?.sent)
            if let source = sources[id] {
                let members = source.leader.map { control.members(of: source.group, leader: $0) } ?? []
                reading.cpuMicroseconds = reader.cpuMicroseconds(group: source.group, members: members)
                if withMemory { reading.memoryBytes = reader.memoryBytes(app: id, members: members) }
            }
            if let memory = reading.memoryBytes { memoryNow.withLock { $0[id] = memory } }
            readings[id] = reading
        }
        return readings
    }

    /// Writes what was counted since the last write, and drops the days no longer kept.
    private func write(_ state: inout State) {
        state.writtenAt = DaemonMetrics.monotonicNanoseconds()
        let newest = state.ledger.newestDay
        state.writtenDay = newest
        let taken = state.ledger.take()
        guard !taken.figures.isEmpty || !taken.memory.isEmpty else { return }
        let firstDayKept = newest == .min ? Int64.min : newest - Int64(settings.daysKept) + 1
        do {
            try store.addUsage(taken.figures, memory: taken.memory, firstDayKept: firstDayKept)
        } catch {
            // Kept for the next write (bounded: one row per app, day and context).
            state.ledger.putBack(taken)
            logger.error("could not write the usage counted (\(taken.figures.count) row(s)); tried again later: \(error)")
        }
    }
}
