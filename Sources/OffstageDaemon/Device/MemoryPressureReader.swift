import OffstageCore

/// Reads the machine's memory pressure (SPEC MEM-1) as normal, warning or critical: from PSI
/// (`/proc/pressure/memory`, Linux 4.20 and later with CONFIG_PSI) where the kernel has it, else from the share of
/// memory still available (`/proc/meminfo`). The thresholds are ``MachinePressureSettings``'.
///
/// PSI says how much of the recent past tasks spent waiting for memory, which is what makes a phone feel slow; a low
/// share of available memory is only a hint of it (caches are reclaimed cheaply), so it is the fallback. `avg10`
/// (the last 10 s) is read: it reacts within seconds and does not flap on one slow allocation.
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

    /// A reader of the given files (the defaults are the kernel's; tests pass fixtures).
    public init(
        psiPath: String? = MemoryPressureReader.systemPSI, meminfoPath: String? = MemoryPressureReader.systemMeminfo,
        settings: MachinePressureSettings = .init()
    ) {
        self.psiPath = psiPath
        self.meminfoPath = meminfoPath
        self.settings = settings
    }

    /// The memory pressure now; nil when neither file can be read and understood.
    public func read() -> MemoryPressure? {
        reading().level
    }

    /// The level and where it came from, or why none could be had: for the daemon's start-up log line.
    public func reading() -> (level: MemoryPressure?, source: String) {
        let syscalls = Syscalls.live
        if let psiPath, let text = try? syscalls.readFile(psiPath), let psi = Self.parsePSI(text) {
            return (Self.level(of: psi, settings), "PSI (\(psiPath))")
        }
        if let meminfoPath, let text = try? syscalls.readFile(meminfoPath), let share = Self.availableShare(text) {
            return (Self.level(availableShare: share, settings), "available memory (\(meminfoPath); no PSI)")
        }
        let tried = [psiPath, meminfoPath].compactMap { $0 }.joined(separator: " and ")
        return (nil, tried.isEmpty ? "no file configured" : "cannot read or understand \(tried)")
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
