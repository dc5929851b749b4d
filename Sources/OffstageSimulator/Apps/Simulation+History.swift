import OffstageCore

/// The history of scheduled work as a shell keeps it (SPEC SCH-8): every record the core hands out, the latest of
/// each, in memory. The daemon keeps the same records in its store; a simulation keeps them here, unbounded (a
/// simulation is short).
public struct HistoryArchive: Sendable {
    struct WaitKey: Hashable, Sendable {
        var app: AppID
        var identifier: String
        var startedAt: Instant
    }

    struct RunKey: Hashable, Sendable {
        var app: AppID
        var run: UInt64
        var startedAt: Instant
    }

    private var waitTable: [WaitKey: WaitRecord] = [:]
    private var runTable: [RunKey: RunRecord] = [:]
    /// The stretches of waiting, oldest first.
    public var waits: [WaitRecord] {
        waitTable.values.sorted { ($0.startedAt, $0.app, $0.identifier) < ($1.startedAt, $1.app, $1.identifier) }
    }
    /// The runs, oldest first.
    public var runs: [RunRecord] { runTable.values.sorted { ($0.startedAt, $0.run) < ($1.startedAt, $1.run) } }

    /// Nothing recorded.
    public init() {}

    /// Keeps `record`: a new one is added, one seen before (open, now closed) replaces it, and a wait closed at the
    /// instant it opened (it lasted no time) is forgotten, as the daemon's store does.
    public mutating func apply(_ record: HistoryRecord) {
        switch record {
        case .wait(let wait):
            let key = WaitKey(app: wait.app, identifier: wait.identifier, startedAt: wait.startedAt)
            waitTable[key] = wait.endedAt == wait.startedAt ? nil : wait
        case .run(let run):
            runTable[RunKey(app: run.app, run: run.run, startedAt: run.startedAt)] = run
        }
    }

    /// The history of one app (or one of its identifiers) from `since` to `now`.
    public func reports(of app: AppID, identifier: String? = nil, since: Instant, now: Instant) -> [TaskHistoryReport] {
        TaskHistoryReport.reports(
            waits: waits.filter { $0.app == app }, runs: runs.filter { $0.app == app }, identifier: identifier,
            from: since, to: now)
    }
}

extension Simulation {
    /// `offstage explain --history` (SPEC SCH-8): when each request of the app ran and how each run ended, and how
    /// long each reason held it back, from `since` (a day ago by default) to now.
    public func history(
        of id: AppID, identifier: String? = nil, since: Instant? = nil
    ) throws(CoreError) -> [TaskHistoryReport] {
        let since = since ?? now - .seconds(86_400)
        try core.validateHistoryQuery(id, identifier: identifier, since: since, at: now)
        return historyArchive.reports(of: id, identifier: identifier, since: since, now: now)
    }
}
