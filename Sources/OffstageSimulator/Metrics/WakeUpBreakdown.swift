import OffstageCore

/// Which of a policy's rules paid for each device wake-up of a replay, and how many of those wake-ups served an open
/// that no free refresh would have served.
///
/// A wake-up is counted as ``EnergyMeter`` counts it (the first run of a cluster that starts with the screen off), and
/// belongs to the rule whose reason the core logged when it started that run (the policy's reason text, sorted into a
/// ``Kind`` by ``kind(of:)``). The wake-up **served an open** when one of its cluster's runs refreshed an app that had
/// been opened since its previous refresh began (a dirty app), and that app's next open comes before a refresh
/// started at the next screen-on could complete: without the wake-up that open would not have been fresh.
public struct WakeUpBreakdown: Sendable {
    /// A rule of the policy, read from its reason text.
    public enum Kind: String, CaseIterable, Sendable {
        /// A bet that the next unlock opens first the app the screen was locked on.
        case resume
        /// A dirty app planned before its next expected open (in use, a usual hour, or no usual hour yet).
        case dirty
        /// A clean app whose content would be old at a usual hour (a habit): it makes content younger, no open fresher.
        case habit
        /// A plan pushed later by back-off after runs without new data.
        case backOff = "back-off"
        /// A plan pushed later because the app has not been opened for days.
        case dormant
        /// Any other reason (a planned policy, processing work).
        case other
    }

    /// The wake-ups one rule paid for.
    public struct Line: Hashable, Sendable {
        /// The rule.
        public var kind: Kind
        /// How many wake-ups it paid for.
        public var wakeUps: Int
        /// How many opens those wake-ups served that no free refresh would have.
        public var servedOpens: Int
    }

    /// One line per rule that paid for at least one wake-up, in the order of ``Kind``.
    public let lines: [Line]

    /// Sorts a policy's reason into a rule: the adaptive policy's reason texts, from their fixed words.
    public static func kind(of reason: String) -> Kind {
        if reason.contains("likely to open it first") { return .resume }
        if reason.contains("backing off after") { return .backOff }
        if reason.contains("days: refreshed once a day") { return .dormant }
        if reason.contains("content would be") || reason.contains("h old in an hour") { return .habit }
        if reason.contains("opened every") || reason.contains("before the user usually opens it")
            || reason.contains("no usual time to open it") || reason.contains("still learning when") {
            return .dirty
        }
        return .other
    }

    /// Breaks down the wake-ups of `outcome`, whose core logged `log`; a free refresh takes `refreshDuration`, plus
    /// `slack` to start.
    public init(outcome: TraceReplay.Outcome, log: [LogEntry], refreshDuration: Duration, slack: Duration = .seconds(1)) {
        let trace = outcome.trace
        let timeline = outcome.timeline
        // Why each run started: the newest run log entry of its app at or before the run.
        var starts: [AppID: [(at: Instant, reason: String)]] = [:]
        for entry in log where entry.kind == .taskRun {
            guard let app = entry.app else { continue }
            starts[app, default: []].append((entry.at, entry.message))
        }
        func reason(_ run: BackgroundRun) -> String {
            let entries = starts[TraceReplay.appID(for: run.app)] ?? []
            return entries.last { $0.at <= run.span.start }?.reason ?? ""
        }
        var opens: [String: [Instant]] = [:]
        for session in trace.sessions { opens[session.app, default: []].append(session.start) }
        // Whether refreshing `run.app` by `run` served its next open, which no refresh at the next screen-on could.
        func served(_ run: BackgroundRun) -> Bool {
            let appOpens = opens[run.app] ?? []
            let refreshes = outcome.refreshes[run.app] ?? []
            guard let next = appOpens.first(where: { $0 >= run.span.end }) else { return false }
            let previousRefresh = refreshes.last { $0.start < run.span.start }?.start
            let dirty = appOpens.contains { open in open < run.span.start && previousRefresh.map { open >= $0 } ?? true }
            guard dirty, refreshes.contains(where: { $0.start == run.span.start }) else { return false }
            guard let screenOn = trace.screenOn.first(where: { $0.end > run.span.end }) else { return false }
            return next < max(screenOn.start, run.span.end) + refreshDuration + slack
        }

        var counts: [Kind: (wakeUps: Int, served: Int)] = [:]
        for wakeUp in timeline.wakeUps {
            // The rule that paid: of the runs that started at that instant, the one the policy did not start because
            // the device was already awake (the core starts the others after it, in the same instant).
            let kinds = wakeUp.runs.filter { $0.span.start == wakeUp.waking.span.start }.map { Self.kind(of: reason($0)) }
            let kind = kinds.first { $0 != .other } ?? kinds.first ?? .other
            counts[kind, default: (0, 0)].wakeUps += 1
            counts[kind, default: (0, 0)].served += wakeUp.runs.count(where: served)
        }
        lines = Kind.allCases.compactMap { kind in
            counts[kind].map { Line(kind: kind, wakeUps: $0.wakeUps, servedOpens: $0.served) }
        }
    }

    /// All wake-ups.
    public var wakeUps: Int { lines.reduce(0) { $0 + $1.wakeUps } }
    /// All opens served.
    public var servedOpens: Int { lines.reduce(0) { $0 + $1.servedOpens } }

    /// `resume 7/6, habit 1/0`: each rule's wake-ups and the opens they served.
    public var summary: String { lines.map { "\($0.kind.rawValue) \($0.wakeUps)/\($0.servedOpens)" }.joined(separator: ", ") }
}
