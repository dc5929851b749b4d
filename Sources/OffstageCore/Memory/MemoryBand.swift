/// How much an app running now matters to the user, for memory (SPEC MEM-1): the order in which the daemon ends apps
/// when memory stays short, as iOS's priority bands and Android's process importance do (decision 0054).
///
/// From the most protected to the least: the app in front; an app running in the background for the user (audio the
/// user started, location updates, a continued-processing task the user started); an app running in the background
/// for work of its own (a background task, a scheduled run, a push or session-events handler, a VoIP or accessory
/// handler, the grace period before its suspension); a suspended app. ``MemoryStanding`` adds the user's
/// "kept in memory" setting and how recently the app was used.
public enum MemoryBand: String, Hashable, Sendable, Codable, CaseIterable, Comparable {
    /// In front: active or inactive. Ended last, only when nothing else is left.
    case foreground
    /// Running in the background for the user: audio playing, location updates, a continued-processing task.
    case backgroundUser = "background-user"
    /// Running in the background for work of its own: a task, a scheduled run, a handler, the grace period.
    case backgroundWork = "background-work"
    /// Suspended: frozen, using memory and no CPU.
    case suspended

    /// Protection: foreground 3 … suspended 0.
    var protection: Int {
        switch self {
        case .foreground: 3
        case .backgroundUser: 2
        case .backgroundWork: 1
        case .suspended: 0
        }
    }

    /// Less protected first: suspended < background-work < background-user < foreground.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.protection < rhs.protection }
}

/// Where a running app stands when memory is short (SPEC MEM-1, SET-2): its band, the user's "kept in memory" setting,
/// and when it was last used.
public struct MemoryStanding: Hashable, Sendable, Codable {
    /// The app.
    public var app: AppID
    /// Its band now.
    public var band: MemoryBand
    /// The user's "kept in memory" setting (SET-2): outside the foreground, ended only after every other app that is
    /// not in front.
    public var keptInMemory: Bool
    /// When the user last had it in front (or, never, when its process started): within a band the least recently
    /// used goes first.
    public var lastUsed: Instant

    /// Creates a standing.
    public init(app: AppID, band: MemoryBand, keptInMemory: Bool, lastUsed: Instant) {
        self.app = app
        self.band = band
        self.keptInMemory = keptInMemory
        self.lastUsed = lastUsed
    }

    /// Whether `self` is ended before `other` when memory is short: apps out of front without "kept in memory" first
    /// (suspended, then background work, then background for the user), then those kept in memory in the same order,
    /// the app in front last; within that, the least recently used first; the app id breaks the last ties, so the
    /// order is the same on every run.
    public func endsBefore(_ other: MemoryStanding) -> Bool {
        func key(_ standing: MemoryStanding) -> (Int, Int, Instant) {
            let front = standing.band == .foreground
            return (front ? 2 : standing.keptInMemory ? 1 : 0, standing.band.protection, standing.lastUsed)
        }
        let (left, right) = (key(self), key(other))
        if left.0 != right.0 { return left.0 < right.0 }
        if left.1 != right.1 { return left.1 < right.1 }
        if left.2 != right.2 { return left.2 < right.2 }
        return app < other.app
    }

    /// The standings in the order the apps would be ended: the first is ended first.
    public static func endingOrder(_ standings: [MemoryStanding]) -> [MemoryStanding] {
        standings.sorted { $0.endsBefore($1) }
    }
}
