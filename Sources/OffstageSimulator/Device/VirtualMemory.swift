import OffstageCore

/// The memory of a simulated device (SPEC MEM-1, MEM-2): what each app's process takes, and the pressure that follows,
/// graded as the daemon grades an app memory budget (`memoryBudgetMB`): a warning from ``warningPercent`` of
/// ``deviceMB`` in use, critical from ``criticalPercent``. With it a trace shows which apps a smaller device would lose,
/// and when: the same core decides, on virtual time.
public struct VirtualMemory: Sendable, Hashable {
    /// The memory the apps share, in MiB.
    public var deviceMB: Double
    /// Percent of it in use from which memory pressure is a warning (the daemon's `budgetWarning`).
    public var warningPercent: Double = 80
    /// Percent of it in use from which memory pressure is critical (`budgetCritical`).
    public var criticalPercent: Double = 90
    /// How often the apps' growth is accounted; the pressure is read at each crossing, after each exit, and at every
    /// accounting while memory is short, as the daemon reads it.
    public var accountEvery: Duration = .milliseconds(250)
    /// MiB each running process takes now, by pid.
    public internal(set) var megabytes: [Int32: Double] = [:]
    /// The level of the latest reading.
    public internal(set) var level: MemoryPressure = .normal
    /// The most the apps took together, in MiB.
    public internal(set) var peakMB: Double = 0
    /// Whether an accounting is scheduled.
    var accounting = false

    /// A device whose apps share `deviceMB` MiB.
    public init(deviceMB: Double, warningPercent: Double = 80, criticalPercent: Double = 90) {
        self.deviceMB = deviceMB
        self.warningPercent = warningPercent
        self.criticalPercent = criticalPercent
    }

    /// MiB in use by every app.
    public var usedMB: Double { megabytes.values.reduce(0, +) }

    /// The level a use of `used` MiB gives.
    public func level(usedMB used: Double) -> MemoryPressure {
        if used >= deviceMB * criticalPercent / 100 { return .critical }
        if used >= deviceMB * warningPercent / 100 { return .warning }
        return .normal
    }
}

/// How a simulated app uses memory: what it takes at launch, how it grows while the user uses it, and what it lets go
/// when warned (SPEC MEM-1).
public struct MemoryBehavior: Sendable, Hashable {
    /// MiB the process takes once launched.
    public var launchMB: Double = 20
    /// MiB it grows by each second it is in front and running (a cache filling as the user browses).
    public var growthMBPerSecondInFront: Double = 0
    /// The share (0 to 1) of what it took beyond ``launchMB`` that it lets go on a memory warning.
    public var freedOnWarning: Double = 0.5
    /// It grows no further than this many MiB; nil: without end.
    public var maximumMB: Double?

    /// The defaults: 20 MiB, no growth, half of any growth let go on a warning.
    public init() {}

    /// An app of `launchMB` that grows by `growthMBPerSecondInFront` in front and lets go `freedOnWarning` of it.
    public init(
        launchMB: Double, growthMBPerSecondInFront: Double = 0, freedOnWarning: Double = 0.5, maximumMB: Double? = nil
    ) {
        self.launchMB = launchMB
        self.growthMBPerSecondInFront = growthMBPerSecondInFront
        self.freedOnWarning = freedOnWarning
        self.maximumMB = maximumMB
    }
}
