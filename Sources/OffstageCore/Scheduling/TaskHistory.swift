/// The open end of the history of waiting (SPEC SCH-8, decision 0044): for each pending request, since when it has
/// waited for the reasons it waits for now. Everything closed goes out as a ``HistoryRecord`` and is forgotten, so
/// the memory kept is one entry per pending request, whatever the length of the history.
///
/// The core tells it what each request waits for whenever the scheduler looks at the request's app (every change
/// that can change a hold makes it look, and time-bound holds lift at a deadline the scheduler already keeps), so the
/// stretches it records begin and end at the instants the reasons changed.
public struct TaskHistory: Sendable {
    /// What one pending request waits for now, as the scheduler found it.
    public struct Waiting: Hashable, Sendable {
        /// The request's identifier.
        public var identifier: String
        /// Its kind.
        public var kind: TaskKind
        /// Every reason holding it; sorted and without repeats once observed.
        public var reasons: [WaitReason]

        /// Creates one.
        public init(identifier: String, kind: TaskKind, reasons: [WaitReason]) {
            self.identifier = identifier
            self.kind = kind
            self.reasons = reasons
        }
    }

    /// Which of an app's requests an observation covers: the scheduler looks at continued-processing requests apart
    /// from the others.
    public enum Scope: Sendable {
        /// App refresh, processing and the legacy fetch.
        case scheduled
        /// Continued processing.
        case continued

        func covers(_ kind: TaskKind) -> Bool { (kind == .continued) == (self == .continued) }
    }

    struct Open: Hashable, Sendable {
        var kind: TaskKind
        var since: Instant
        var reasons: [WaitReason]
    }

    /// The open stretch of each waiting request, by app then identifier.
    private(set) var open: [AppID: [String: Open]] = [:]
    /// Stretches opened during the current input and not handed out yet: they go out once the input is over, so a
    /// stretch that opens and closes at the same instant is never recorded.
    private var unwritten: Set<TaskKey> = []
    /// Apps with an open continued-processing stretch.
    private(set) var continuedApps: Set<AppID> = []

    /// Nothing open.
    public init() {}

    /// The number of requests with an open stretch.
    public var openCount: Int { open.values.reduce(0) { $0 + $1.count } }

    /// Since when, and why, the request has waited; nil when it is not waiting.
    public func waiting(_ key: TaskKey) -> (since: Instant, reasons: [WaitReason])? {
        open[key.app]?[key.identifier].map { ($0.since, $0.reasons) }
    }

    /// The app's requests in `scope` wait now exactly as `waiting` says: stretches whose reasons changed close and new
    /// ones open; requests no longer waiting close theirs.
    public mutating func observe(_ app: AppID, _ scope: Scope, waiting: [Waiting], at now: Instant) -> [HistoryRecord] {
        var records: [HistoryRecord] = []
        var current = open[app] ?? [:]
        var seen: Set<String> = []
        for var wait in waiting {
            wait.reasons = Array(Set(wait.reasons)).sorted()
            seen.insert(wait.identifier)
            if let existing = current[wait.identifier] {
                if existing.reasons == wait.reasons && existing.kind == wait.kind { continue }
                if let record = close(app, wait.identifier, existing, now) { records.append(record) }
            }
            current[wait.identifier] = Open(kind: wait.kind, since: now, reasons: wait.reasons)
            unwritten.insert(TaskKey(app: app, identifier: wait.identifier))
        }
        for (identifier, existing) in current.sorted(by: { $0.key < $1.key })
        where scope.covers(existing.kind) && !seen.contains(identifier) {
            current[identifier] = nil
            if let record = close(app, identifier, existing, now) { records.append(record) }
        }
        store(app, current)
        return records
    }

    /// The request stopped waiting (its run starts): its stretch closes.
    public mutating func stop(_ key: TaskKey, at now: Instant) -> [HistoryRecord] {
        guard var current = open[key.app], let existing = current.removeValue(forKey: key.identifier) else { return [] }
        store(key.app, current)
        return close(key.app, key.identifier, existing, now).map { [$0] } ?? []
    }

    /// Every stretch closes (the daemon shuts down).
    public mutating func stopAll(at now: Instant) -> [HistoryRecord] {
        var records: [HistoryRecord] = []
        for app in open.keys.sorted() {
            for (identifier, existing) in (open[app] ?? [:]).sorted(by: { $0.key < $1.key }) {
                if let record = close(app, identifier, existing, now) { records.append(record) }
            }
        }
        open = [:]
        continuedApps = []
        return records
    }

    /// The stretches opened during the input that are still open, as open records; called as the input ends.
    public mutating func flush() -> [HistoryRecord] {
        guard !unwritten.isEmpty else { return [] }
        let keys = unwritten.sorted()
        unwritten.removeAll(keepingCapacity: true)
        return keys.compactMap { key in
            open[key.app]?[key.identifier].map { .wait(record(key.app, key.identifier, $0, endedAt: nil)) }
        }
    }

    private mutating func store(_ app: AppID, _ current: [String: Open]) {
        open[app] = current.isEmpty ? nil : current
        if current.values.contains(where: { $0.kind == .continued }) {
            continuedApps.insert(app)
        } else {
            continuedApps.remove(app)
        }
    }

    /// The closed record of a stretch, or nothing when it opened during this input (it lasted no time and was never
    /// handed out).
    private mutating func close(_ app: AppID, _ identifier: String, _ stretch: Open, _ now: Instant) -> HistoryRecord? {
        if unwritten.remove(TaskKey(app: app, identifier: identifier)) != nil, stretch.since == now { return nil }
        return .wait(record(app, identifier, stretch, endedAt: now))
    }

    private func record(_ app: AppID, _ identifier: String, _ stretch: Open, endedAt: Instant?) -> WaitRecord {
        WaitRecord(
            app: app, identifier: identifier, kind: stretch.kind, startedAt: stretch.since, endedAt: endedAt,
            reasons: stretch.reasons)
    }
}
