/// How the daemon turns the machine's memory and temperature readings into levels, and how often it reads them
/// (SPEC MEM-1, SCH-11). A configuration file gives them as one object, `"machinePressure": {"pollInterval": 5, …}`;
/// keys left out keep their defaults. Percentages are of time (PSI) or of memory (`/proc/meminfo`).
public struct MachinePressureSettings: Hashable, Sendable, Codable {
    /// Seconds between readings of memory pressure and the thermal zones, which have no event the daemon can wait
    /// for, while something depends on them (continued-processing work queued or running); 0 reads them only at start
    /// and whenever power or network change. Default 5 s.
    public var pollInterval: Double = 5
    /// PSI: memory pressure is a warning when `some avg10` (the share of the last 10 s in which at least one task
    /// waited for memory) reaches this. Default 10 %.
    public var psiSomeWarning: Double = 10
    /// PSI: memory pressure is critical when `some avg10` reaches this. Default 40 %.
    public var psiSomeCritical: Double = 40
    /// PSI: memory pressure is critical when `full avg10` (every task waited for memory at once) reaches this.
    /// Default 10 %.
    public var psiFullCritical: Double = 10
    /// Without PSI: memory pressure is a warning when `MemAvailable` is at or below this share of `MemTotal`.
    /// Default 10 %.
    public var availableWarning: Double = 10
    /// Without PSI: memory pressure is critical when `MemAvailable` is at or below this share of `MemTotal`.
    /// Default 5 %.
    public var availableCritical: Double = 5
    /// With an app memory budget (`memoryBudgetMB`): memory pressure is a warning once the apps use this share of it.
    /// Default 80 %.
    public var budgetWarning: Double = 80
    /// With an app memory budget: memory pressure is critical once the apps use this share of it; below 100 so that
    /// the daemon ends apps in its order before the kernel ends one at the limit. Default 90 %.
    public var budgetCritical: Double = 90
    /// A thermal zone this many degrees Celsius below a passive trip point is `fair`; this far below a hot or
    /// critical one, `serious`. Default 5 °C.
    public var thermalMargin: Double = 5

    /// The defaults.
    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = MachinePressureSettings()
        func number(_ key: CodingKeys, _ fallback: Double, in range: ClosedRange<Double>) throws -> Double {
            guard let value = try container.decodeIfPresent(Double.self, forKey: key) else { return fallback }
            guard value.isFinite, range.contains(value) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: "must be from \(range.lowerBound.formatted) to \(range.upperBound.formatted)")
            }
            return value
        }
        pollInterval = try number(.pollInterval, defaults.pollInterval, in: 0...3_600)
        if pollInterval > 0 && pollInterval < 0.1 {
            throw DecodingError.dataCorruptedError(
                forKey: .pollInterval, in: container, debugDescription: "must be 0 (no polling) or at least 0.1 s")
        }
        psiSomeWarning = try number(.psiSomeWarning, defaults.psiSomeWarning, in: 0...100)
        psiSomeCritical = try number(.psiSomeCritical, defaults.psiSomeCritical, in: 0...100)
        psiFullCritical = try number(.psiFullCritical, defaults.psiFullCritical, in: 0...100)
        availableWarning = try number(.availableWarning, defaults.availableWarning, in: 0...100)
        availableCritical = try number(.availableCritical, defaults.availableCritical, in: 0...100)
        thermalMargin = try number(.thermalMargin, defaults.thermalMargin, in: 0...100)
        budgetWarning = try number(.budgetWarning, defaults.budgetWarning, in: 1...99)
        budgetCritical = try number(.budgetCritical, defaults.budgetCritical, in: 1...99)
        guard budgetCritical >= budgetWarning else {
            throw DecodingError.dataCorruptedError(
                forKey: .budgetCritical, in: container, debugDescription: "must be at least budgetWarning")
        }
        guard psiSomeCritical >= psiSomeWarning else {
            throw DecodingError.dataCorruptedError(
                forKey: .psiSomeCritical, in: container, debugDescription: "must be at least psiSomeWarning")
        }
        guard availableCritical <= availableWarning else {
            throw DecodingError.dataCorruptedError(
                forKey: .availableCritical, in: container, debugDescription: "must be at most availableWarning")
        }
    }
}

extension Double {
    /// `5` rather than `5.0`: a setting's number as a message or a log line gives it.
    var formatted: String { self == rounded() ? String(Int(self)) : String(self) }
}
