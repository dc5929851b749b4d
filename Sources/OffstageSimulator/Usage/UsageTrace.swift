import OffstageCore

/// What one user did with one phone over a stretch of time: when the screen was on, and which app was in the
/// foreground when.
///
/// Invariants (checked by ``validate()``, which the initializer runs):
/// - `start <= end`, and every session and screen-on span lies inside `[start, end)`;
/// - `apps` is sorted and distinct, and every session's app is in it (an app may have no session);
/// - `sessions` are non-empty and sorted by start; sessions of one app never overlap (sessions of different apps may);
/// - `screenOn` spans are non-empty, sorted and disjoint (they may touch);
/// - every session lies inside one screen-on span.
public struct UsageTrace: Hashable, Sendable {
    /// A name for reports (for example the data set or the generator profile and seed).
    public let name: String
    /// When the trace begins.
    public let start: Instant
    /// When the trace ends (the first instant after it).
    public let end: Instant
    /// The app labels, sorted and distinct.
    public let apps: [String]
    /// The foreground sessions, sorted by start.
    public let sessions: [AppSession]
    /// The spans during which the screen was on, sorted and disjoint.
    public let screenOn: [Span]

    /// Creates a trace and checks its invariants.
    ///
    /// - Parameter apps: the app labels; nil takes the labels of the sessions.
    /// - Throws: ``UsageTraceError`` naming the first broken invariant.
    public init(
        name: String, start: Instant, end: Instant, apps: [String]? = nil, sessions: [AppSession], screenOn: [Span]
    ) throws(UsageTraceError) {
        self.name = name
        self.start = start
        self.end = end
        self.apps = apps ?? Array(Set(sessions.map(\.app))).sorted()
        self.sessions = sessions
        self.screenOn = screenOn
        try validate()
    }

    /// Checks every invariant listed on the type.
    /// - Throws: ``UsageTraceError`` naming the first broken invariant.
    public func validate() throws(UsageTraceError) {
        guard start <= end else { throw .endsBeforeStart(start: start, end: end) }
        let bounds = Span(start: start, end: end)
        for (previous, label) in zip(apps, apps.dropFirst()) where previous >= label {
            throw .appsNotSortedAndDistinct(apps)
        }
        let known = Set(apps)
        var previousScreenOn: Span?
        for span in screenOn {
            guard !span.isEmpty else { throw .emptyScreenOnSpan(span) }
            if let previous = previousScreenOn, span.start < previous.end {
                throw .screenOnNotSortedAndDisjoint(span, after: previous)
            }
            guard bounds.contains(span) else { throw .screenOnOutsideTrace(span) }
            previousScreenOn = span
        }
        var previousSession: AppSession?
        var lastOfApp: [String: AppSession] = [:]
        for session in sessions {
            guard known.contains(session.app) else { throw .unknownApp(session) }
            guard session.start < session.end else { throw .emptySession(session) }
            if let previous = previousSession, session.start < previous.start {
                throw .sessionsNotSortedByStart(session, after: previous)
            }
            guard bounds.contains(session.span) else { throw .sessionOutsideTrace(session) }
            if let last = lastOfApp[session.app], session.start < last.end {
                throw .overlappingSessions(last, session)
            }
            guard let span = screenOnSpan(at: session.start), span.contains(session.span) else {
                throw .sessionOutsideScreenOn(session)
            }
            previousSession = session
            lastOfApp[session.app] = session
        }
    }

    /// How long the trace lasts.
    public var duration: Duration { end - start }

    /// How many days the trace lasts (fractional).
    public var days: Double { duration.inSeconds / 86_400 }

    /// The sessions of one app, sorted by start.
    public func sessions(of app: String) -> [AppSession] { sessions.filter { $0.app == app } }

    /// The opens (session starts) of one app, sorted.
    public func opens(of app: String) -> [Instant] { sessions(of: app).map(\.start) }

    /// The screen-on span holding `instant`, if the screen is on then.
    public func screenOnSpan(at instant: Instant) -> Span? {
        // Binary search for the last span starting at or before the instant.
        var low = 0
        var high = screenOn.count
        while low < high {
            let mid = (low + high) / 2
            if screenOn[mid].start <= instant { low = mid + 1 } else { high = mid }
        }
        guard low > 0, screenOn[low - 1].contains(instant) else { return nil }
        return screenOn[low - 1]
    }

    /// Whether the screen is on at `instant`.
    public func isScreenOn(at instant: Instant) -> Bool { screenOnSpan(at: instant) != nil }

    /// The total time the screen was on.
    public var screenOnTime: Duration { screenOn.reduce(.zero) { $0 + $1.duration } }

    /// The total time some app was in the foreground (sessions of different apps that overlap count twice).
    public var foregroundTime: Duration { sessions.reduce(.zero) { $0 + $1.duration } }
}
