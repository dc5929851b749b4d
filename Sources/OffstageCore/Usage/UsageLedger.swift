/// What the shell read of an app's counters at one moment (SPEC SET-3); nil where a counter cannot be read. The
/// counters only grow, from when they were made: the ledger counts what they moved.
public struct UsageReading: Hashable, Sendable {
    /// Bytes the app's sockets received.
    public var received: Int64?
    /// Bytes the app's sockets sent.
    public var sent: Int64?
    /// CPU time of its processes, in microseconds.
    public var cpuMicroseconds: Int64?
    /// Its memory now, in bytes (not a counter: the figure itself).
    public var memoryBytes: Int64?

    /// Creates a reading.
    public init(received: Int64? = nil, sent: Int64? = nil, cpuMicroseconds: Int64? = nil, memoryBytes: Int64? = nil) {
        self.received = received
        self.sent = sent
        self.cpuMicroseconds = cpuMicroseconds
        self.memoryBytes = memoryBytes
    }
}

/// One app's memory on one day.
public struct UsageDay: Hashable, Sendable, Comparable {
    /// The app.
    public var app: AppID
    /// The local day.
    public var day: Int64

    /// Creates a key.
    public init(app: AppID, day: Int64) {
        self.app = app
        self.day = day
    }

    public static func < (lhs: UsageDay, rhs: UsageDay) -> Bool { (lhs.app, lhs.day) < (rhs.app, rhs.day) }
}

/// Turns the core's usage changes and the shell's counter readings into figures per app, day, foreground or
/// background and metered or not (SPEC SET-3): what a counter moved while a context lasted goes to that context; the
/// time a running context lasted is the app's runtime; a context that began with a wake-up counts one. The daemon
/// feeds it real readings; the simulator none (it has runtime and wake-ups only).
public struct UsageLedger: Sendable {
    struct Segment: Sendable {
        var context: UsageContext
        var base: UsageReading
    }

    /// The apps' open contexts, with their counters when each began.
    var segments: [AppID: Segment] = [:]
    /// Counted and not yet taken.
    public private(set) var figures: [UsageKey: UsageFigures] = [:]
    /// Memory read and not yet taken.
    public private(set) var memory: [UsageDay: MemoryFigures] = [:]
    /// The latest day seen.
    public private(set) var newestDay: Int64 = .min

    /// Creates an empty ledger.
    public init() {}

    /// The apps with an open context.
    public var openApps: [AppID] { segments.keys.sorted() }

    /// Applies a change, with the counters of the apps it names read as it happened (or a little after).
    /// - Parameter bases: where the counters of an app stood when its count last stopped (its last reading, or when
    ///   they were made): an app that starts again (a launch) counts from there, not from a reading that may have come
    ///   after its first bytes. Its counters do not move while it has no process.
    public mutating func apply(
        _ change: UsageChange, readings: [AppID: UsageReading] = [:], bases: [AppID: UsageReading] = [:]
    ) {
        for id in change.contexts.keys.sorted() {
            let reading = readings[id] ?? UsageReading()
            let started = segments[id] == nil
            close(id, at: change.at, reading)
            guard case .some(.some(let context)) = change.contexts[id] else { continue }
            segments[id] = Segment(context: context, base: started ? Self.base(bases[id], reading) : reading)
            newestDay = max(newestDay, context.day)
            if context.wakeUp { figures[UsageKey(id, context), default: .init()].wakeUps += 1 }
        }
        for (key, bytes) in change.transferred {
            figures[key, default: .init()].add(UsageFigures(transferReceived: bytes.received, transferSent: bytes.sent))
            newestDay = max(newestDay, key.day)
        }
    }

    /// Counts what the open contexts of `ids` used up to `now`, and goes on counting them from the reading, in the
    /// same contexts (a query, a stop).
    public mutating func readOpen(_ ids: [AppID], at now: Instant, readings: [AppID: UsageReading]) {
        for id in ids {
            guard var segment = segments[id] else { continue }
            let reading = readings[id] ?? UsageReading()
            close(id, at: now, reading)
            segment.base = reading
            segment.context.since = max(segment.context.since, now)
            // Its wake-up is counted already.
            segment.context.wakeUp = false
            segments[id] = segment
        }
    }

    /// Records the memory of an app read apart from a change (while it stays frozen, its memory does not move): to
    /// the day of its open context. An app with none (it ended since) is left out.
    public mutating func recordMemory(_ id: AppID, bytes: Int64) {
        guard let segment = segments[id] else { return }
        add(memory: bytes, to: UsageDay(app: id, day: segment.context.day))
    }

    private mutating func add(memory bytes: Int64, to day: UsageDay) {
        if memory[day] == nil { memory[day] = MemoryFigures(last: bytes, peak: bytes) } else { memory[day]?.add(bytes) }
    }

    /// Hands over what was counted since the last time, and starts again from nothing.
    public mutating func take() -> (figures: [UsageKey: UsageFigures], memory: [UsageDay: MemoryFigures]) {
        defer {
            figures = [:]
            memory = [:]
        }
        return (figures.filter { !$0.value.isZero }, memory)
    }

    /// Takes back what ``take()`` handed over and could not be kept (a write that failed), to hand it over again.
    public mutating func putBack(_ taken: (figures: [UsageKey: UsageFigures], memory: [UsageDay: MemoryFigures])) {
        for (key, value) in taken.figures { figures[key, default: .init()].add(value) }
        for (key, value) in taken.memory {
            if let later = memory[key] { memory[key] = MemoryFigures(last: later.last, peak: max(later.peak, value.peak)) } else { memory[key] = value }
        }
    }

    /// Forgets an uninstalled app.
    public mutating func forget(_ id: AppID) {
        segments[id] = nil
        figures = figures.filter { $0.key.app != id }
        memory = memory.filter { $0.key.app != id }
    }

    /// Adds what the context of `id` used up to `end`, as `reading` shows, to its figures; ends the context.
    mutating func close(_ id: AppID, at end: Instant, _ reading: UsageReading) {
        guard let segment = segments.removeValue(forKey: id) else { return }
        let base = segment.base
        var used = UsageFigures()
        used.received = Self.moved(from: base.received, to: reading.received)
        used.sent = Self.moved(from: base.sent, to: reading.sent)
        used.cpuMicroseconds = Self.moved(from: base.cpuMicroseconds, to: reading.cpuMicroseconds)
        if segment.context.running { used.seconds = max(0, (end - segment.context.since).inSeconds) }
        figures[UsageKey(id, segment.context), default: .init()].add(used)
        if let bytes = reading.memoryBytes { add(memory: bytes, to: UsageDay(app: id, day: segment.context.day)) }
    }

    /// Each counter's base: where it stood when the count stopped, where that is known and not ahead of now.
    static func base(_ stopped: UsageReading?, _ now: UsageReading) -> UsageReading {
        guard let stopped else { return now }
        func pick(_ old: Int64?, _ new: Int64?) -> Int64? {
            guard let old, let new, old <= new else { return new }
            return old
        }
        return UsageReading(
            received: pick(stopped.received, now.received), sent: pick(stopped.sent, now.sent),
            cpuMicroseconds: pick(stopped.cpuMicroseconds, now.cpuMicroseconds), memoryBytes: now.memoryBytes)
    }

    /// What a counter moved from `before` to `now`: nothing when either is unknown; a counter that went back was made
    /// again (a new table, a group made again) and counts from zero.
    static func moved(from before: Int64?, to now: Int64?) -> Int64 {
        guard let before, let now else { return 0 }
        return now >= before ? now - before : max(0, now)
    }
}
