/// The numbers of the system's answer to memory pressure (SPEC MEM-1), under `"memory"` in a configuration file:
/// `"memory": {"warningGrace": 2, …}`; keys left out keep their defaults.
public struct MemoryResponseSettings: Hashable, Sendable, Codable {
    /// Seconds the apps have after a memory warning to free what they can before any app is ended. Default 2 s.
    public var warningGrace: Double = 2
    /// Seconds between two apps ended while pressure stays: the next reading must see the memory the last one freed.
    /// Default 1 s.
    public var endingInterval: Double = 1
    /// The pressure from which apps are ended once the grace is over. Default `critical`.
    public var endAppsAt: MemoryPressure = .critical
    /// Seconds a lower pressure (a warning) may last before apps are ended for it too: warnings that free nothing do
    /// not hold the device short of memory forever. Default 30 s.
    public var warningTolerance: Double = 30
    /// A smaller memory limit, in MiB, for every app while it is out of front (SPEC MEM-2), as iOS gives background apps
    /// less than the one in front: an app over it when it leaves the front, or that outgrows it there, is ended, and its
    /// last exit says "exceeded its background memory limit". Nil (the default): none, the manifest's limit holds
    /// everywhere.
    public var backgroundLimitMB: Int?

    /// The defaults.
    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = MemoryResponseSettings()
        func seconds(_ key: CodingKeys, _ fallback: Double, in range: ClosedRange<Double>) throws -> Double {
            try container.decodeNumberIfPresent(forKey: key, in: range, unit: "seconds") ?? fallback
        }
        warningGrace = try seconds(.warningGrace, defaults.warningGrace, in: 0 ... 3_600)
        endingInterval = try seconds(.endingInterval, defaults.endingInterval, in: 0.01 ... 3_600)
        warningTolerance = try seconds(.warningTolerance, defaults.warningTolerance, in: 0 ... CheckedNumber.longestDuration)
        backgroundLimitMB = try container.decodeIntegerIfPresent(Int.self, forKey: .backgroundLimitMB, in: 1 ... 1_048_576)
        if let name = try container.decodeIfPresent(String.self, forKey: .endAppsAt) {
            guard let level = MemoryPressure(rawValue: name), level > .normal else {
                throw DecodingError.dataCorruptedError(
                    forKey: .endAppsAt, in: container,
                    debugDescription: "must be warning or critical; got \(QuotedText.quote(name))")
            }
            endAppsAt = level
        }
    }
}

/// One stretch of memory pressure, from the reading that left normal to the one that returned to it (SPEC MEM-1),
/// and what the system did about it. The decisions are pure: ``OffstageCore`` feeds it the level and the instant and
/// carries out what it says (warn the running apps, end the first app of the ending order).
public struct MemoryResponse: Hashable, Sendable {
    /// The current episode; nil while memory is not short.
    public struct Episode: Hashable, Sendable {
        /// When pressure left normal.
        public var began: Instant
        /// The level of the latest reading.
        public var level: MemoryPressure
        /// When the running apps were last warned: at the start, and again each time the level rose.
        public var warnedAt: Instant
        /// When the latest app was ended for it, if one was.
        public var lastEndedAt: Instant?
        /// The apps ended in this episode, in order.
        public var ended: [AppID] = []
        /// The order held nobody left to end: nothing is done until a process starts or the level rises.
        public var waitingForApps = false
        /// A reading of the machine came after the latest app was ended (or none was ended yet): only a reading that
        /// still says memory is short, taken once that app's memory was freed, ends another.
        public var readSinceEnding = true
        /// No app is ended before this: a process that started while nobody was left gets an interval first.
        public var notBefore: Instant?
        /// VoIP apps ended in this episode, relaunched once it is over (SPEC MODE-2) rather than into the shortage.
        public var relaunchWhenRelieved: Set<AppID> = []
    }

    /// The episode under way, if memory is short.
    public internal(set) var episode: Episode?
    /// Apps ended for memory since the core started, for the metrics and the tests.
    public internal(set) var endedTotal = 0

    /// An empty response: memory is not short.
    public init() {}

    /// What a new reading means.
    enum Reading: Hashable {
        /// Nothing to do.
        case unchanged
        /// Memory became short, or shorter: the running apps are warned.
        case warn
        /// Memory is no longer short: the episode is over.
        case relieved(Episode)
    }

    /// Takes the level read at `now`.
    mutating func read(_ level: MemoryPressure, at now: Instant) -> Reading {
        guard level > .normal else {
            guard let over = episode else { return .unchanged }
            episode = nil
            return .relieved(over)
        }
        guard var current = episode else {
            episode = Episode(began: now, level: level, warnedAt: now)
            return .warn
        }
        let rose = level > current.level
        current.level = level
        if rose {
            current.warnedAt = now
            current.waitingForApps = false
        }
        episode = current
        return rose ? .warn : .unchanged
    }

    /// The instant from which the next app may be ended if pressure stays; nil when memory is not short, when nobody
    /// is left to end, or while the reading after the latest ending is awaited (unless the level is `given` by hand,
    /// which no reading changes).
    func nextEnding(_ settings: MemoryResponseSettings, given: Bool = false) -> Instant? {
        guard let episode, !episode.waitingForApps, episode.readSinceEnding || given else { return nil }
        // The apps warned last have their grace; the level decides how long pressure may stay before apps go.
        var earliest = episode.warnedAt + .seconds(double: settings.warningGrace)
        if episode.level < settings.endAppsAt {
            earliest = max(earliest, episode.began + .seconds(double: settings.warningTolerance))
        }
        if let last = episode.lastEndedAt { earliest = max(earliest, last + .seconds(double: settings.endingInterval)) }
        if let notBefore = episode.notBefore { earliest = max(earliest, notBefore) }
        return earliest
    }

    /// Whether an app is to be ended at `now`.
    func endingDue(at now: Instant, _ settings: MemoryResponseSettings, given: Bool = false) -> Bool {
        nextEnding(settings, given: given).map { $0 <= now } ?? false
    }

    /// Records that `id` was ended at `now`.
    mutating func ended(_ id: AppID, at now: Instant) {
        episode?.ended.append(id)
        episode?.lastEndedAt = now
        episode?.readSinceEnding = false
        endedTotal += 1
    }

    /// The machine's memory was read (whether or not the level changed).
    mutating func readingTaken() {
        if episode?.readSinceEnding == false { episode?.readSinceEnding = true }
    }

    /// Records that the order held nobody left to end: nothing more is done until ``processStarted()``.
    mutating func nobodyLeft() {
        episode?.waitingForApps = true
    }

    /// A process started: while memory is short it may be ended in its turn, an interval from now at the earliest
    /// when nobody was left.
    mutating func processStarted(at now: Instant, _ settings: MemoryResponseSettings) {
        guard episode?.waitingForApps == true else { return }
        episode?.waitingForApps = false
        episode?.notBefore = now + .seconds(double: settings.endingInterval)
    }
}

/// The memory limit in force for an app's process (SPEC MEM-2): its manifest's, or out of front the device's background
/// limit where that is smaller.
public struct MemoryLimit: Hashable, Sendable {
    /// The limit, in MiB.
    public var megabytes: Int
    /// Whether it is the background limit.
    public var inBackground: Bool

    /// The limit in bytes.
    public var bytes: Int64 { Int64(megabytes) * 1_048_576 }

    /// Why an app over it is ended.
    public var reason: TerminationReason {
        inBackground ? .backgroundMemoryLimitExceeded(megabytes: megabytes) : .memoryLimitExceeded(megabytes: megabytes)
    }
}

extension TerminationReason {
    /// It outgrew a memory limit (its manifest's or the background one): the app's failure, throttled like a crash.
    var isMemoryLimit: Bool {
        switch self {
        case .memoryLimitExceeded, .backgroundMemoryLimitExceeded: true
        default: false
        }
    }
}
