/// The history of one request over a window, for people and scripts (`offstage explain --history`, SPEC SCH-8):
/// when it ran and how each run ended, how long it waited, and how long each reason held it back.
///
/// Each reason has its own total: when two reasons held a request at once (no network and no charger), the time
/// counts for both, so the totals may add up to more than ``waited``, the time it waited at all (decision 0044).
public struct TaskHistoryReport: Hashable, Sendable, Codable {
    /// How long one reason held the request back within the window.
    public struct ReasonTotal: Hashable, Sendable, Codable {
        /// The reason.
        public var reason: WaitReason
        /// Seconds it held the request.
        public var seconds: Double

        /// Creates one.
        public init(reason: WaitReason, seconds: Double) {
            self.reason = reason
            self.seconds = seconds
        }
    }

    /// The app.
    public var app: AppID
    /// The request's identifier.
    public var identifier: String
    /// Its kind (the latest recorded).
    public var kind: TaskKind
    /// Runs that overlap the window, oldest first (a run that began before the window is shown whole).
    public var runs: [RunRecord]
    /// Seconds within the window the request waited, for whatever reasons.
    public var waited: Double
    /// Each reason's own total within the window, longest first (ties by name).
    public var held: [ReasonTotal]
    /// Whether a stretch of waiting within the window was cut short by a daemon that stopped without closing it.
    public var interrupted: Bool

    /// Creates a report.
    public init(
        app: AppID, identifier: String, kind: TaskKind, runs: [RunRecord], waited: Double, held: [ReasonTotal],
        interrupted: Bool
    ) {
        self.app = app
        self.identifier = identifier
        self.kind = kind
        self.runs = runs
        self.waited = waited
        self.held = held
        self.interrupted = interrupted
    }

    /// The reports of every identifier found in `waits` and `runs` (filtered to `identifier` if given) over
    /// `[from, to]`, sorted by identifier. Open stretches and runs count up to `to`.
    public static func reports(
        waits: [WaitRecord], runs: [RunRecord], identifier: String? = nil, from: Instant, to: Instant
    ) -> [TaskHistoryReport] {
        var reports: [TaskKey: TaskHistoryReport] = [:]
        func report(_ app: AppID, _ identifier: String, _ kind: TaskKind) -> TaskHistoryReport {
            reports[TaskKey(app: app, identifier: identifier)]
                ?? TaskHistoryReport(
                    app: app, identifier: identifier, kind: kind, runs: [], waited: 0, held: [], interrupted: false)
        }
        var totals: [TaskKey: [WaitReason: Int64]] = [:]
        var waited: [TaskKey: Int64] = [:]
        for wait in waits.sorted(by: { $0.startedAt < $1.startedAt }) where identifier == nil || wait.identifier == identifier {
            let start = max(wait.startedAt, from)
            let end = min(wait.endedAt ?? to, to)
            guard end > start else { continue }
            let key = TaskKey(app: wait.app, identifier: wait.identifier)
            var entry = report(wait.app, wait.identifier, wait.kind)
            entry.kind = wait.kind
            entry.interrupted = entry.interrupted || wait.interrupted
            reports[key] = entry
            // Nanoseconds, summed exactly; stretches of one request never overlap, so their sum is the time waited.
            let nanoseconds = (end - start).nanoseconds
            waited[key, default: 0] += nanoseconds
            for reason in Set(wait.reasons) { totals[key, default: [:]][reason, default: 0] += nanoseconds }
        }
        for run in runs.sorted(by: { ($0.startedAt, $0.run) < ($1.startedAt, $1.run) })
        where identifier == nil || run.identifier == identifier {
            guard run.startedAt <= to, (run.endedAt ?? to) >= from else { continue }
            let key = TaskKey(app: run.app, identifier: run.identifier)
            var entry = report(run.app, run.identifier, run.kind)
            entry.runs.append(run)
            reports[key] = entry
        }
        return reports.keys.sorted().compactMap { key in
            guard var entry = reports[key] else { return nil }
            entry.waited = Double(waited[key] ?? 0) / 1e9
            entry.held = (totals[key] ?? [:]).map { ReasonTotal(reason: $0.key, seconds: Double($0.value) / 1e9) }
                .sorted { ($1.seconds, $0.reason) < ($0.seconds, $1.reason) }
            return entry
        }
    }
}
