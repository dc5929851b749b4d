import Foundation
import OffstageCore

extension TestApp {
    /// When each of the app's scheduled requests (or the one with `identifier`) ran and how each run ended, and how
    /// long each reason held it back, from `since` (a day before now by default) to now — what
    /// `offstage explain --history` prints (SPEC SCH-8).
    ///
    /// ```swift
    /// let history = try app.history("com.example.weather.refresh")
    /// #expect(history.first?.runs.map(\.outcome) == ["completed", "completed"])
    /// #expect(history.first?.heldBy("low-power-mode") ?? 0 > 3600)
    /// ```
    ///
    /// - Throws: ``TestKitError/refused(message:fix:)`` for an identifier the app does not list, or a `since` after
    ///   now, as the CLI refuses them.
    public func history(_ identifier: String? = nil, since: Date? = nil) throws -> [TaskHistory] {
        let appID = appID
        return try device.host.with { state in
            try refusing {
                try state.simulation.history(
                    of: appID, identifier: identifier,
                    since: since.map { Instant(nanosecondsSinceEpoch: Int64(($0.timeIntervalSince1970 * 1e9).rounded())) }
                ).map(TaskHistory.init)
            }
        }
    }
}

/// The history of one scheduled request over a window (SPEC SCH-8): its runs and what held it back.
public struct TaskHistory: Sendable, Hashable, CustomStringConvertible {
    /// One run of the request.
    public struct Run: Sendable, Hashable {
        /// When its handler was called.
        public var startedAt: Date
        /// When it ended; nil while it runs.
        public var endedAt: Date?
        /// How the app was started for it: `launched`, `resumed`, `running` or `adopted`.
        public var start: String
        /// How it ended: `completed`, `expired`, `cancelled`, `cut-off`, `app-ended`, `daemon-ended`; nil while it runs.
        public var outcome: String?
        /// What the app said of it when it completed: `newData`, `noData` or `failed`; nil when it did not complete.
        public var result: String?
        /// Why its expiration handler was called, if it was: `runtime`, `forced`, `conditions` …
        public var expiry: String?
        /// Whether it was forced (`runTaskNow`).
        public var forced: Bool
    }

    /// The request's identifier.
    public var identifier: String
    /// `refresh`, `processing`, `fetch` or `continued`.
    public var kind: String
    /// Its runs within the window, oldest first.
    public var runs: [Run]
    /// Seconds within the window it waited, for whatever reasons.
    public var waited: Double
    /// Each reason's own seconds within the window, longest first (`low-power-mode`, `network`, `earliest-begin` …).
    public var held: [HeldReason]

    /// How long one reason held the request back.
    public struct HeldReason: Sendable, Hashable {
        /// The reason, as `offstage explain` names it.
        public var reason: String
        /// Seconds within the window.
        public var seconds: Double
    }

    /// The seconds `reason` held it back within the window (0 if it never did).
    public func heldBy(_ reason: String) -> Double { held.first { $0.reason == reason }?.seconds ?? 0 }

    init(_ report: TaskHistoryReport) {
        identifier = report.identifier
        kind = report.kind.rawValue
        runs = report.runs.map { run in
            Run(
                startedAt: Date(timeIntervalSince1970: run.startedAt.secondsSinceEpoch),
                endedAt: run.endedAt.map { Date(timeIntervalSince1970: $0.secondsSinceEpoch) }, start: run.start.rawValue,
                outcome: run.outcome?.rawValue, result: run.result?.rawValue, expiry: run.expiry?.rawValue, forced: run.forced)
        }
        waited = report.waited
        held = report.held.map { HeldReason(reason: $0.reason.rawValue, seconds: $0.seconds) }
    }

    public var description: String {
        let outcomes = runs.map { $0.outcome ?? "running" }.joined(separator: ", ")
        let reasons = held.map { "\($0.reason) \(Int($0.seconds)) s" }.joined(separator: ", ")
        return "\(identifier) (\(kind)): \(runs.count) run(s) [\(outcomes)]; waited \(Int(waited)) s [\(reasons)]"
    }
}
