import OffstageCore
import Synchronization

/// Reads the machine's memory pressure (SPEC MEM-1) as normal, warning or critical: from PSI
/// (`/proc/pressure/memory`, Linux 4.20 and later with CONFIG_PSI) where the kernel has it, else from the share of
/// memory still available (`/proc/meminfo`). The thresholds are ``MachinePressureSettings``'.
///
/// PSI says how much of the recent past tasks spent waiting for memory, which is what makes a phone feel slow; a low
/// share of available memory is only a hint of it (caches are reclaimed cheaply), so it is the fallback. `avg10`
/// (the last 10 s) is read at a first reading; after it, the share of the time since an earlier reading (at least
/// ``shortestSpan`` and at most ``longestSpan`` before), from the `total` counters: it follows relief at once, where
/// `avg10` lags for 10 s and more, so an app ended for memory is not followed by others for a shortage that is over.
///
/// With an app memory budget (``budget``) the level is also how full the budget is; the higher of the two counts.
public struct MemoryPressureReader: Sendable {
    /// The kernel's PSI file for memory.
    public static let systemPSI = "/proc/pressure/memory"
    /// The kernel's memory summary.
    public static let systemMeminfo = "/proc/meminfo"

    /// One line of a PSI file: `some avg10=1.50 avg60=0.40 avg300=0.10 total=123456`.
    public struct PSILine: Hashable, Sendable {
        /// Percent of the last 10, 60 and 300 seconds.
        public var avg10: Double
        public var avg60: Double
        public var avg300: Double
        /// Microseconds stalled since boot.
        public var total: UInt64
    }

    /// A PSI file: `some` (at least one task waited) and `full` (all non-idle tasks waited at once).
    public struct PSI: Hashable, Sendable {
        public var some: PSILine
        /// Absent on kernels that do not report it for the resource.
        public var full: PSILine?
    }

    /// The PSI file read; nil reads none.
    public let psiPath: String?
    /// The meminfo file read; nil reads none.
    public let meminfoPath: String?
    /// The thresholds.
    public let settings: MachinePressureSettings
    /// The app memory budget, if one is set.
    let budget: MemoryBudget?
    /// The `total` counters of recent readings, for the share of the time since one of them.
    private let samples = PSISamples()

    /// An earlier reading is used for the share once it is this old: a shorter span says too little.
    static let shortestSpan: Duration = .seconds(1)
    /// An earlier reading older than this is not used: `avg10` is as recent.
    static let longestSpan: Duration = .seconds(10)

    /// A reader of the given files (the defaults are the kernel's; tests pass fixtures).
    public init(
        psiPath: String? = MemoryPressureReader.systemPSI, meminfoPath: String? = MemoryPressureReader.systemMeminfo,
        settings: MachinePressureSettings = .init()
    ) {
        self.init(psiPath: psiPath, meminfoPath: meminfoPath, settings: settings, budget: nil)
    }

    /// A reader that also grades the app memory budget's usage.
    init(psiPath: String?, meminfoPath: String?, settings: MachinePressureSettings, budget: MemoryBudget?) {
        self.psiPath = psiPath
        self.meminfoPath = meminfoPath
        self.settings = settings
        self.budget = budget
    }

    /// The same reader with the app memory budget given.
    func with(budget: MemoryBudget?) -> MemoryPressureReader {
        MemoryPressureReader(psiPath: psiPath, meminfoPath: meminfoPath, settings: settings, budget: budget)
    }

    /// The memory pressure now, at least `floor` (what a PSI trigger that just fired says); nil when no source can be
    /// read and understood.
    public func read(floor: MemoryPressure? = nil) -> MemoryPressure? {
        let level = reading().level
        guard let floor else { return level }
        return max(level ?? floor, floor)
    }

    /// The level and where it came from, or why none could be had: for the daemon's start-up log line.
    public func reading() -> (level: MemoryPressure?, source: String) {
        let syscalls = Syscalls.live
        var machine: (level: MemoryPressure?, source: String)
        if let psiPath, let text = try? syscalls.readFile(psiPath), let psi = Self.parsePSI(text) {
            let recent = samples.recent(psi, at: ContinuousClock.now)
            machine = (recent.map { Self.level(recentShare: $0, settings) } ?? Self.level(of: psi, settings), "PSI (\(psiPath))")
        } else if let meminfoPath, let text = try? syscalls.readFile(meminfoPath), let share = Self.availableShare(text) {
            machine = (Self.level(availableShare: share, settings), "available memory (\(meminfoPath); no PSI)")
        } else {
            let tried = [psiPath, meminfoPath].compactMap { $0 }.joined(separator: " and ")
            machine = (nil, tried.isEmpty ? "no file configured" : "cannot read or understand \(tried)")
        }
        guard let budget else { return machine }
        let source = "\(machine.source), and the app memory budget of \(budget.description)"
        guard let level = budget.read(syscalls) else { return (machine.level, source + " (unreadable)") }
        return (max(machine.level ?? level, level), source)
    }

    /// The level of the shares of time stalled since an earlier reading (`some`, and `full` where the kernel has it).
    static func level(recentShare share: (some: Double, full: Double?), _ settings: MachinePressureSettings) -> MemoryPressure {
        if let full = share.full, full >= settings.psiFullCritical { return .critical }
        if share.some >= settings.psiSomeCritical { return .critical }
        if share.some >= settings.psiSomeWarning { return .warning }
        return .normal
    }

    /// Parses a PSI file; nil when it has no well-formed `some` line.
    public static func parsePSI(_ text: String) -> PSI? {
        var lines: [String: PSILine] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: " ")
            guard let kind = fields.first, kind == "some" || kind == "full" else { continue }
            var values: [String: Substring] = [:]
            for field in fields.dropFirst() {
                guard let equals = field.firstIndex(of: "=") else { continue }
                values[String(field[..<equals])] = field[field.index(after: equals)...]
            }
            guard let avg10 = values["avg10"].flatMap({ Double($0) }), let avg60 = values["avg60"].flatMap({ Double($0) }),
                let avg300 = values["avg300"].flatMap({ Double($0) }), let total = values["total"].flatMap({ UInt64($0) }),
                [avg10, avg60, avg300].allSatisfy({ $0.isFinite && $0 >= 0 })
            else { continue }
            lines[String(kind)] = PSILine(avg10: avg10, avg60: avg60, avg300: avg300, total: total)
        }
        guard let some = lines["some"] else { return nil }
        return PSI(some: some, full: lines["full"])
    }

    /// The level PSI gives: critical when `full avg10` or `some avg10` reach their critical thresholds, a warning
    /// when `some avg10` reaches its warning threshold, else normal.
    public static func level(of psi: PSI, _ settings: MachinePressureSettings) -> MemoryPressure {
        if let full = psi.full, full.avg10 >= settings.psiFullCritical { return .critical }
        if psi.some.avg10 >= settings.psiSomeCritical { return .critical }
        if psi.some.avg10 >= settings.psiSomeWarning { return .warning }
        return .normal
    }

    /// `MemAvailable` as a percentage of `MemTotal`; nil when either is missing (kernels before 3.14 have no
    /// MemAvailable) or the total is 0.
    public static func availableShare(_ text: String) -> Double? {
        var values: [Substring: Double] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon]
            guard key == "MemTotal" || key == "MemAvailable" else { continue }
            let number = line[line.index(after: colon)...].split(separator: " ").first
            values[key] = number.flatMap { Double($0) }
        }
        guard let total = values["MemTotal"], let available = values["MemAvailable"], total > 0 else { return nil }
        return min(100, max(0, available / total * 100))
    }

    /// The level a share of available memory gives.
    public static func level(availableShare share: Double, _ settings: MachinePressureSettings) -> MemoryPressure {
        if share <= settings.availableCritical { return .critical }
        if share <= settings.availableWarning { return .warning }
        return .normal
    }
}

/// The `total` counters of recent PSI readings and when they were taken: the share of the time stalled since one of
/// them is what memory did lately, without the lag of the kernel's averages.
final class PSISamples: Sendable {
    struct Sample {
        let at: ContinuousClock.Instant
        let some: UInt64
        let full: UInt64?
    }

    private let kept = Mutex<[Sample]>([])

    /// Records `psi` read at `now` and returns the percentages of the time stalled since the newest earlier reading at
    /// least ``MemoryPressureReader/shortestSpan`` old and at most ``MemoryPressureReader/longestSpan``; nil when there
    /// is none (the caller takes `avg10`).
    func recent(_ psi: MemoryPressureReader.PSI, at now: ContinuousClock.Instant) -> (some: Double, full: Double?)? {
        kept.withLock { kept in
            kept.removeAll { now - $0.at > MemoryPressureReader.longestSpan }
            let earlier = kept.last { now - $0.at >= MemoryPressureReader.shortestSpan }
            kept.append(Sample(at: now, some: psi.some.total, full: psi.full?.total))
            // Readings come a few a second at most (exits, wake-ups, the poll): 64 always reach a second back.
            if kept.count > 64 { kept.removeFirst(kept.count - 64) }
            guard let earlier, psi.some.total >= earlier.some else { return nil }
            let micros = Double((now - earlier.at).components.seconds) * 1e6 + Double((now - earlier.at).components.attoseconds) / 1e12
            func share(_ total: UInt64, _ before: UInt64) -> Double { min(100, Double(total - before) / micros * 100) }
            var full: Double?
            if let now = psi.full?.total, let before = earlier.full, now >= before { full = share(now, before) }
            return (share(psi.some.total, earlier.some), full)
        }
    }
}
