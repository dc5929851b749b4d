/// What an app's use of the machine counts as while it lasts (SPEC SET-3): in front or in the background, on a
/// metered network or not, on which local day, and whether it began by waking the app. The core decides it; the shell
/// reads the app's counters (bytes, CPU, memory) when it changes and adds what they moved to the context that ends.
public struct UsageContext: Hashable, Sendable {
    /// When it began.
    public var since: Instant
    /// The local day it counts for (days since 1970-01-01 in the device's local time).
    public var day: Int64
    /// The app is in front (active or inactive).
    public var foreground: Bool
    /// The app runs in the background (not frozen): the time that counts as its background runtime.
    public var backgroundRunning: Bool
    /// The network in use is metered.
    public var metered: Bool
    /// It began with a background wake-up: a launch into the background, or a resume from suspension to run there.
    public var wakeUp: Bool

    /// Creates a context.
    public init(since: Instant, day: Int64, foreground: Bool, backgroundRunning: Bool, metered: Bool, wakeUp: Bool) {
        self.since = since
        self.day = day
        self.foreground = foreground
        self.backgroundRunning = backgroundRunning
        self.metered = metered
        self.wakeUp = wakeUp
    }

    /// The app runs code in it (in front, or in the background and not frozen).
    public var running: Bool { foreground || backgroundRunning }
}

/// Bytes the daemon moved for an app's background transfers (SPEC TR-1), counted to its usage beside its own.
public struct TransferBytes: Hashable, Sendable {
    /// Downloaded.
    public var received: Int64
    /// Uploaded.
    public var sent: Int64

    /// Creates a count.
    public init(received: Int64 = 0, sent: Int64 = 0) {
        self.received = received
        self.sent = sent
    }
}

/// What changed in the apps' usage contexts during one input (SPEC SET-3). One action per input.
public struct UsageChange: Hashable, Sendable {
    /// When: the end of the contexts that changed.
    public var at: Instant
    /// Each changed app's new context; nil ends its count (its process is gone, or it was uninstalled).
    public var contexts: [AppID: UsageContext?]
    /// Bytes the daemon moved for apps' transfers during the input, and what they count as.
    public var transferred: [UsageKey: TransferBytes]

    /// Creates a change.
    public init(at: Instant, contexts: [AppID: UsageContext?] = [:], transferred: [UsageKey: TransferBytes] = [:]) {
        self.at = at
        self.contexts = contexts
        self.transferred = transferred
    }
}

/// Every app's current usage context, as last handed to the shell (SPEC SET-3).
public struct UsageMeter: Hashable, Sendable {
    /// The contexts of the apps with a process.
    public private(set) var contexts: [AppID: UsageContext] = [:]
    /// The apps whose context is running: they are split at local midnight, so that each day gets what it used.
    /// A frozen app uses no CPU and is split at its next change instead, without a wake-up of its own.
    public private(set) var running: Set<AppID> = []
    /// Apps found alive after a restart: their next context is not a wake-up (the app was already running).
    var adopted: Set<AppID> = []

    /// Creates a meter with no context.
    public init() {}

    /// What an app is doing, as far as its usage is concerned.
    struct Kind: Hashable {
        var foreground: Bool
        var backgroundRunning: Bool
        var metered: Bool
    }

    /// Records an app's kind of use (nil: no process); returns the new context if it changed (`.some(nil)` when the
    /// count ends).
    mutating func update(_ id: AppID, to kind: Kind?, at now: Instant, day: Int64) -> UsageContext?? {
        let old = contexts[id]
        guard let kind else {
            adopted.remove(id)
            guard old != nil else { return nil }
            contexts[id] = nil
            running.remove(id)
            return .some(nil)
        }
        if let old, old.day == day, old.foreground == kind.foreground, old.backgroundRunning == kind.backgroundRunning,
            old.metered == kind.metered
        {
            return nil
        }
        let wasRunning = old?.running ?? false
        let wakeUp = kind.backgroundRunning && !wasRunning && !adopted.contains(id)
        adopted.remove(id)
        let context = UsageContext(
            since: now, day: day, foreground: kind.foreground, backgroundRunning: kind.backgroundRunning,
            metered: kind.metered, wakeUp: wakeUp)
        contexts[id] = context
        if context.running { running.insert(id) } else { running.remove(id) }
        return .some(context)
    }

    /// The local midnight at which a running app's context is split next; nil when no app runs.
    func nextSplit(_ clock: LocalClock) -> Instant? {
        running.compactMap { contexts[$0]?.day }.min().map { clock.startOfDay($0 + 1) }
    }
}
