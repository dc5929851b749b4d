import OffstageCore

/// What a ``DeviceTimeline``'s background work cost, by component.
public struct EnergyReport: Hashable, Sendable {
    /// Device wake-ups: background runs (or clusters of overlapping runs) that started while the screen was off and
    /// no run that had already woken the device was going on (``EnergyMeter``).
    public var wakeUps: Int
    /// The background runs measured.
    public var runs: Int
    /// The total length of all runs (overlapping runs each count: they use CPU side by side).
    public var backgroundCPUTime: Duration
    /// Runs that were cold launches.
    public var coldLaunches: Int
    /// Network runs that found the radio idle and promoted it.
    public var radioActivations: Int
    /// The time the radio was active (some network run going on).
    public var radioActiveTime: Duration
    /// The time the radio spent in its tail.
    public var radioTailTime: Duration
    /// The energy, in joules, by component.
    public var energy: Breakdown

    /// Energy in joules by component.
    public struct Breakdown: Hashable, Sendable {
        /// Waking the device from suspend (and suspending again).
        public var wakeUps: Double
        /// The CPU running background work.
        public var cpu: Double
        /// The extra CPU of cold launches.
        public var coldLaunches: Double
        /// Radio promotions.
        public var radioPromotions: Double
        /// The radio while active.
        public var radioActive: Double
        /// The radio in its tail.
        public var radioTail: Double

        /// Creates a breakdown.
        public init(
            wakeUps: Double = 0, cpu: Double = 0, coldLaunches: Double = 0, radioPromotions: Double = 0,
            radioActive: Double = 0, radioTail: Double = 0
        ) {
            self.wakeUps = wakeUps
            self.cpu = cpu
            self.coldLaunches = coldLaunches
            self.radioPromotions = radioPromotions
            self.radioActive = radioActive
            self.radioTail = radioTail
        }

        /// All the radio's energy.
        public var radio: Double { radioPromotions + radioActive + radioTail }

        /// The sum of every component.
        public var total: Double { wakeUps + cpu + coldLaunches + radio }
    }

    /// Creates a report.
    public init(
        wakeUps: Int, runs: Int, backgroundCPUTime: Duration, coldLaunches: Int, radioActivations: Int,
        radioActiveTime: Duration, radioTailTime: Duration, energy: Breakdown
    ) {
        self.wakeUps = wakeUps
        self.runs = runs
        self.backgroundCPUTime = backgroundCPUTime
        self.coldLaunches = coldLaunches
        self.radioActivations = radioActivations
        self.radioActiveTime = radioActiveTime
        self.radioTailTime = radioTailTime
        self.energy = energy
    }

    /// Background CPU time in seconds.
    public var backgroundCPUSeconds: Double { backgroundCPUTime.inSeconds }

    /// The total energy in joules.
    public var totalEnergy: Double { energy.total }
}
