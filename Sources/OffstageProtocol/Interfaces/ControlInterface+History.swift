import OffstageCore

/// The wire types of `io.offstage.Control.ExplainHistory` (SPEC SCH-8, looking back). Optionals are written as null
/// rather than left out, so scripts can rely on every key being present.
extension ControlInterface {
    /// `ExplainHistory` parameters.
    public struct ExplainHistoryParameters: Codable, Hashable, Sendable {
        /// The app's id.
        public var app: String
        /// One identifier, or every one of the app's.
        public var identifier: String?
        /// Seconds since the Unix epoch the window starts at; a day before now when nil.
        public var since: Double?

        /// Creates parameters.
        public init(app: String, identifier: String? = nil, since: Double? = nil) {
            self.app = app
            self.identifier = identifier
            self.since = since
        }
    }

    /// One reason's total on the wire.
    public struct HeldTotalMessage: Codable, Hashable, Sendable {
        /// The reason's stable name.
        public var reason: String
        /// The controller that checks it.
        public var controller: String
        /// A few words for people.
        public var label: String
        /// Seconds it held the request back within the window.
        public var seconds: Double

        /// The wire form of a total.
        public init(_ total: TaskHistoryReport.ReasonTotal) {
            reason = total.reason.rawValue
            controller = total.reason.controller
            label = total.reason.label
            seconds = total.seconds
        }
    }

    /// One run on the wire.
    public struct RunHistoryMessage: Codable, Hashable, Sendable {
        public var run: UInt64
        public var startedAt: Double
        public var endedAt: Double?
        /// Seconds from start to end, or to the reply while it runs.
        public var seconds: Double
        public var forced: Bool
        /// launched, resumed, running or adopted.
        public var start: String
        /// completed, expired, cancelled, cut-off, app-ended or daemon-stopped; nil while it runs.
        public var outcome: String?
        /// What the app said when it completed it.
        public var result: String?
        /// Why its expiration handler was called.
        public var expiry: String?
        public var detail: String?

        /// The wire form of a run, its duration measured to `now` while it runs.
        public init(_ run: RunRecord, now: Instant) {
            self.run = run.run
            startedAt = run.startedAt.secondsSinceEpoch
            endedAt = run.endedAt?.secondsSinceEpoch
            seconds = run.duration(at: now)
            forced = run.forced
            start = run.start.rawValue
            outcome = run.outcome?.rawValue
            result = run.result?.rawValue
            expiry = run.expiry?.rawValue
            detail = run.detail
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(run, forKey: .run)
            try container.encode(startedAt, forKey: .startedAt)
            try container.encode(endedAt, forKey: .endedAt)
            try container.encode(seconds, forKey: .seconds)
            try container.encode(forced, forKey: .forced)
            try container.encode(start, forKey: .start)
            try container.encode(outcome, forKey: .outcome)
            try container.encode(result, forKey: .result)
            try container.encode(expiry, forKey: .expiry)
            try container.encode(detail, forKey: .detail)
        }
    }

    /// One request's history on the wire.
    public struct TaskHistoryMessage: Codable, Hashable, Sendable {
        public var identifier: String
        public var kind: String
        public var runs: [RunHistoryMessage]
        /// Seconds it waited within the window, whatever held it.
        public var waited: Double
        /// Each reason's own total, longest first; they may add up to more than ``waited``.
        public var held: [HeldTotalMessage]
        /// A wait within the window was closed by the next daemon, not by the one that opened it.
        public var interrupted: Bool

        /// The wire form of a report.
        public init(_ report: TaskHistoryReport, now: Instant) {
            identifier = report.identifier
            kind = report.kind.rawValue
            runs = report.runs.map { RunHistoryMessage($0, now: now) }
            waited = report.waited
            held = report.held.map(HeldTotalMessage.init)
            interrupted = report.interrupted
        }
    }

    /// `ExplainHistory` reply.
    public struct ExplainHistoryReply: Codable, Hashable, Sendable {
        /// The app.
        public var app: String
        /// The window, in seconds since the Unix epoch.
        public var from: Double
        public var to: Double
        /// How far back the daemon keeps history, in seconds.
        public var keptSeconds: Double
        /// One entry per identifier with anything recorded in the window, sorted by identifier.
        public var tasks: [TaskHistoryMessage]

        /// Creates a reply.
        public init(app: String, from: Double, to: Double, keptSeconds: Double, tasks: [TaskHistoryMessage]) {
            self.app = app
            self.from = from
            self.to = to
            self.keptSeconds = keptSeconds
            self.tasks = tasks
        }
    }
}
