/// Everything the scheduler keeps about one app across daemon restarts (SPEC SCH-10): pending requests, the
/// fetch interval, when the user opens the app, what its refreshes found, and its daily budget.
public struct AppSchedule: Hashable, Sendable, Codable {
    /// Pending requests by identifier (a new submit with the same identifier replaces the old one).
    public var requests: [String: TaskRequest] = [:]
    /// Requests whose run had started when this was saved. A daemon that restarts finds them here and makes
    /// them pending again, so a crash never loses one (SPEC §11 reliability).
    public var started: [String: TaskRequest] = [:]
    /// The legacy fetch interval.
    public var fetchInterval: FetchInterval = .never
    /// When the last legacy fetch started.
    public var lastFetchAt: Instant?
    /// When the user opens the app.
    public var usage: UsageHistory = .init()
    /// What the app's background work found.
    public var results: ResultHistory = .init()
    /// Background runtime spent today.
    public var budget: DailyBudget = .init()

    /// Nothing scheduled, nothing learned.
    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        requests = try container.decodeIfPresent([String: TaskRequest].self, forKey: .requests) ?? [:]
        started = try container.decodeIfPresent([String: TaskRequest].self, forKey: .started) ?? [:]
        fetchInterval = try container.decodeIfPresent(FetchInterval.self, forKey: .fetchInterval) ?? .never
        lastFetchAt = try container.decodeIfPresent(Instant.self, forKey: .lastFetchAt)
        usage = try container.decodeIfPresent(UsageHistory.self, forKey: .usage) ?? .init()
        results = try container.decodeIfPresent(ResultHistory.self, forKey: .results) ?? .init()
        budget = try container.decodeIfPresent(DailyBudget.self, forKey: .budget) ?? .init()
    }

    /// The number of pending processing requests.
    public var processingCount: Int { requests.values.filter { $0.kind == .processing }.count }
}

/// What an app's background work found, for the policy's back-off (SPEC SCH-5).
public struct ResultHistory: Hashable, Sendable, Codable {
    /// Runs in a row that found nothing new or failed.
    public var unproductiveStreak: Int = 0
    /// The last result.
    public var last: TaskResult?
    /// When the last run started.
    public var lastRunAt: Instant?
    /// When the app's content was last brought up to date (a run that did not fail completed).
    public var lastRefreshAt: Instant?
    /// When the run that last brought it up to date started. An open after this instant is not covered by that
    /// refresh: it fetched what there was then, and an open during it showed its update to the user (decision 0046).
    public var lastRefreshStartedAt: Instant?
    /// Runs completed, by result.
    public var counts: [TaskResult: Int] = [:]

    /// No runs yet.
    public init() {}

    /// Records the end of a run that started at `startedAt` (by default `now`).
    public mutating func record(_ result: TaskResult, at now: Instant, startedAt: Instant? = nil) {
        last = result
        counts[result, default: 0] += 1
        if result == .newData { unproductiveStreak = 0 } else { unproductiveStreak += 1 }
        if result.refreshedContent {
            lastRefreshAt = now
            lastRefreshStartedAt = startedAt ?? now
        }
    }
}

/// Background runtime an app spent on battery during one day (SPEC SCH-6: daily budgets).
public struct DailyBudget: Hashable, Sendable, Codable {
    /// The day (days since the epoch, in the device's time zone) the count is for.
    public var day: Int64 = 0
    /// Seconds spent that day.
    public var used: Double = 0

    /// Nothing spent.
    public init() {}

    /// Seconds spent on `day` (zero on any other day).
    public func used(on day: Int64) -> Double { self.day == day ? used : 0 }

    /// Adds runtime spent on `day`.
    public mutating func spend(_ seconds: Double, on day: Int64) {
        if self.day != day {
            self.day = day
            used = 0
        }
        used += max(0, seconds)
    }
}
