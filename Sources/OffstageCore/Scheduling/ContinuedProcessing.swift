/// What a continued-processing request carries beyond its identifier (SPEC SCH-11): the work the user started in the
/// foreground, named so that the user knows what keeps running.
public struct ContinuedTaskDetails: Hashable, Sendable, Codable {
    /// What to do when no slot is free at submission.
    public enum Strategy: String, Hashable, Sendable, Codable, CaseIterable {
        /// Wait for a slot (the default). Queued requests are dropped when the user force-quits the app.
        case queue
        /// Refuse the submission unless the task can start now.
        case fail
    }

    /// Shown to the user, e.g. "Exporting 120 photos".
    public var title: String
    /// Shown under the title; may be empty.
    public var subtitle: String
    /// Queue or fail.
    public var strategy: Strategy

    /// Creates details.
    public init(title: String, subtitle: String = "", strategy: Strategy = .queue) {
        self.title = title
        self.subtitle = subtitle
        self.strategy = strategy
    }
}

/// Progress a running continued-processing task reported (SPEC SCH-11), with the title it shows now.
public struct ContinuedProgress: Hashable, Sendable, Codable {
    /// Units done.
    public var completed: Int64
    /// Units in all; 0 while the app does not know yet.
    public var total: Int64
    /// The title shown now (the app may change it as the work goes on).
    public var title: String
    /// The subtitle shown now.
    public var subtitle: String
    /// When the app last reported; the task expires when it goes silent for too long.
    public var reportedAt: Instant

    /// Creates progress.
    public init(completed: Int64 = 0, total: Int64 = 0, title: String, subtitle: String, reportedAt: Instant) {
        self.completed = completed
        self.total = total
        self.title = title
        self.subtitle = subtitle
        self.reportedAt = reportedAt
    }

    /// The fraction done, 0...1; 0 while the total is unknown.
    public var fraction: Double { Self.fraction(completed: completed, total: total) }

    /// `42 % (21 of 50)`, or `0 of ?` while the total is unknown.
    public var description: String { Self.description(completed: completed, total: total) }

    /// The fraction `completed` of `total` is, 0...1; 0 while the total is unknown.
    public static func fraction(completed: Int64, total: Int64) -> Double {
        guard total > 0 else { return 0 }
        return min(1, max(0, Double(completed) / Double(total)))
    }

    /// `42 % (21 of 50)`, or `21 of ?` while the total is unknown: how the log, the CLI and the desktop say it.
    public static func description(completed: Int64, total: Int64) -> String {
        guard total > 0 else { return "\(completed) of ?" }
        return "\(Int((fraction(completed: completed, total: total) * 100).rounded(.down))) % (\(completed) of \(total))"
    }
}

/// Limits of continued processing (SPEC SCH-11). A configuration file gives them as one object,
/// `"continuedProcessing": {"slots": 2, …}`; keys left out keep their defaults.
public struct ContinuedProcessingLimits: Hashable, Sendable, Codable {
    /// Continued-processing tasks running at once on the device. Default 2.
    public var slots: Int = 2
    /// Tasks left running under pressure (low power mode, a low battery not charging, memory pressure, a hot
    /// device); those above are ended, the one reporting the least progress first. Default 1.
    public var slotsUnderPressure: Int = 1
    /// At or below this battery level, not charging, the device is under pressure. Default 10 %.
    public var pressureBatteryLevel: Int = 10
    /// At or above this memory pressure the device is under pressure: `warning` or `critical`. Default critical
    /// (a warning is the apps' to answer by freeing memory; critical means work stalls for memory).
    public var pressureMemory: MemoryPressure = .critical
    /// At or above this thermal state the device is under pressure: `fair`, `serious` or `critical`. Default serious
    /// (the kernel throttles; the platform ends continued-processing work there too).
    public var pressureThermal: ThermalState = .serious
    /// A task that reports no progress for this long is expired. Default 60 s.
    public var progressTimeout: Double = 60
    /// Requests one app may have queued. Default 8.
    public var maximumQueuedPerApp: Int = 8

    /// The defaults.
    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func count(_ key: CodingKeys, _ fallback: Int, in range: ClosedRange<Int>) throws -> Int {
            guard let value = try container.decodeIfPresent(Int.self, forKey: key) else { return fallback }
            guard range.contains(value) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "must be between \(range.lowerBound) and \(range.upperBound)")
            }
            return value
        }
        func level<Level: RawRepresentable & CaseIterable & Comparable>(
            _ key: CodingKeys, _ fallback: Level, above lowest: Level
        ) throws -> Level where Level.RawValue == String {
            guard let name = try container.decodeIfPresent(String.self, forKey: key) else { return fallback }
            guard let value = Level(rawValue: name), value > lowest else {
                let accepted = Level.allCases.filter { $0 > lowest }.map(\.rawValue).joined(separator: ", ")
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "must be one of \(accepted); got \(QuotedText.quote(name))")
            }
            return value
        }
        let defaults = ContinuedProcessingLimits()
        slots = try count(.slots, defaults.slots, in: 1...1_000)
        slotsUnderPressure = try count(.slotsUnderPressure, defaults.slotsUnderPressure, in: 0...1_000)
        pressureBatteryLevel = try count(.pressureBatteryLevel, defaults.pressureBatteryLevel, in: 0...100)
        maximumQueuedPerApp = try count(.maximumQueuedPerApp, defaults.maximumQueuedPerApp, in: 1...1_000)
        pressureMemory = try level(.pressureMemory, defaults.pressureMemory, above: .normal)
        pressureThermal = try level(.pressureThermal, defaults.pressureThermal, above: .nominal)
        progressTimeout =
            try container.decodeNumberIfPresent(
                forKey: .progressTimeout, in: 0.001 ... CheckedNumber.longestDuration, unit: "seconds")
            ?? defaults.progressTimeout
    }
}

/// The decisions of continued processing, apart from any state (SPEC SCH-11): whether the device is under pressure,
/// which running tasks end under it, and how many queued requests may start.
public struct ContinuedProcessingPolicy: Hashable, Sendable {
    /// A running task as the policy sees it.
    public struct Running: Hashable, Sendable {
        public var app: AppID
        public var run: UInt64
        public var progress: ContinuedProgress
        public var startedAt: Instant
        /// Its expiration handler was already called (by the user, the policy or a silence): it is ending.
        public var ending: Bool

        public init(app: AppID, run: UInt64, progress: ContinuedProgress, startedAt: Instant, ending: Bool) {
            self.app = app
            self.run = run
            self.progress = progress
            self.startedAt = startedAt
            self.ending = ending
        }
    }

    /// The limits.
    public var limits: ContinuedProcessingLimits

    public init(limits: ContinuedProcessingLimits) { self.limits = limits }

    /// Why the device is under pressure, or nil when it is not: low power mode, a low battery not charging, memory
    /// pressure at or above ``ContinuedProcessingLimits/pressureMemory``, a thermal state at or above
    /// ``ContinuedProcessingLimits/pressureThermal``; the first that holds is named.
    public func pressure(_ conditions: DeviceConditions) -> String? {
        if conditions.lowPowerMode { return "low power mode is on" }
        if !conditions.charging && conditions.batteryLevel <= limits.pressureBatteryLevel {
            return "the battery is at \(conditions.batteryLevel) %, not charging"
        }
        if conditions.memoryPressure >= limits.pressureMemory {
            return "memory pressure is \(conditions.memoryPressure.rawValue)"
        }
        if conditions.thermalState >= limits.pressureThermal {
            return "the device is hot (thermal state \(conditions.thermalState.rawValue))"
        }
        return nil
    }

    /// How many tasks may run now.
    public func slots(underPressure: Bool) -> Int { underPressure ? limits.slotsUnderPressure : limits.slots }

    /// The tasks to end so that no more than `slots` run: the least progress first; among equals, the one that
    /// started last (it has the least work to lose). Tasks already ending count as gone.
    public func toEnd(_ running: [Running], slots: Int) -> [Running] {
        let live = running.filter { !$0.ending }
        guard live.count > slots else { return [] }
        let ordered = live.sorted {
            if $0.progress.fraction != $1.progress.fraction { return $0.progress.fraction < $1.progress.fraction }
            if $0.startedAt != $1.startedAt { return $0.startedAt > $1.startedAt }
            return ($0.app, $0.run) < ($1.app, $1.run)
        }
        return Array(ordered.prefix(live.count - slots))
    }

    /// How many queued requests may start now, with `running` tasks (ending ones included: they hold their slot until
    /// they are gone).
    public func free(running: Int, underPressure: Bool) -> Int { max(0, slots(underPressure: underPressure) - running) }
}

/// A continued-processing task as the user sees it (`offstage apps`, `offstage tasks`, SPEC SCH-11).
public struct ContinuedTaskView: Hashable, Sendable, Codable {
    /// Queued, running, or ending (its expiration handler was called).
    public enum State: String, Hashable, Sendable, Codable {
        case queued, running, ending
    }

    public var identifier: String
    public var state: State
    public var title: String
    public var subtitle: String
    public var completed: Int64
    public var total: Int64
    /// Why it is ending, once it is.
    public var endedBecause: String?

    public init(
        identifier: String, state: State, title: String, subtitle: String, completed: Int64, total: Int64,
        endedBecause: String? = nil
    ) {
        self.identifier = identifier
        self.state = state
        self.title = title
        self.subtitle = subtitle
        self.completed = completed
        self.total = total
        self.endedBecause = endedBecause
    }

    /// One line: `'Exporting photos' 42 % (21 of 50), running`.
    public var description: String {
        let progress = ContinuedProgress.description(completed: completed, total: total)
        return "\(QuotedText.quote(title)) \(progress), \(state.rawValue)" + (endedBecause.map { ": \($0)" } ?? "")
    }
}
