import OffstageCore

/// Turns a parsed Usage Logger log into screen-on spans and sessions, applying the rules documented on
/// ``UsageLoggerTrace`` and counting each repair.
struct UsageLoggerAssembly: Sendable {
    /// A session as the events describe it, before clipping to visible time.
    struct RawSession: Sendable, Hashable {
        var app: String
        var start: Instant
        var end: Instant
        /// A prospective session of the app left on top, resumed at a screen-on.
        var resumed = false
    }

    let log: UsageLoggerLog
    let rules: UsageLoggerTrace.Rules
    private(set) var repairs = UsageLoggerTrace.Repairs()
    /// The screen-on spans, sorted and disjoint.
    private(set) var screenOn: [Span] = []

    init(log: UsageLoggerLog, rules: UsageLoggerTrace.Rules) {
        self.log = log
        self.rules = rules
    }

    /// Builds everything and returns the trace's sessions, sorted by start then app.
    mutating func sessions() -> [AppSession] {
        screenOn = buildScreenOn()
        let visible = rules.requiresUnlock ? Self.intersect(screenOn, unlockedSpans()) : screenOn
        var raw = retrospectiveSessions()
        raw += prospectiveSessions()
        var pieces: [AppSession] = []
        for session in raw {
            let span = Span(start: session.start, end: session.end)
            let onScreen = Self.pieces(of: span, in: screenOn)
            let shown = Self.pieces(of: span, in: visible)
            if onScreen.isEmpty {
                repairs.sessionsOutsideScreenOn += 1
                continue
            }
            if shown.isEmpty {
                repairs.lockScreenSessions += 1
                continue
            }
            if session.resumed { repairs.resumedSessions += 1 }
            if shown.reduce(Duration.zero, { $0 + $1.duration }) < span.duration { repairs.clippedSessions += 1 }
            repairs.splitSessions += shown.count - 1
            pieces += shown.map { AppSession(app: session.app, span: $0) }
        }
        let kept = pieces.filter { !rules.excludedLabels.contains($0.app) }
        repairs.excludedSessions = pieces.count - kept.count
        return coalesce(kept)
    }

    // MARK: Screen and lock

    /// Screen-on spans from both logging modes, with missing screen-offs repaired.
    private mutating func buildScreenOn() -> [Span] {
        // Instants at which something shows the phone in use: app events and screen/lock events.
        let evidence = (log.appEvents.map(\.time) + log.deviceEvents.filter { $0.kind != .other }.map(\.time)).sorted()
        var spans: [Span] = []
        var openedAt: Instant?
        for event in log.deviceEvents {
            switch event.kind {
            case .screenOn:
                if let start = openedAt {
                    repairs.missingScreenOffs += 1
                    let last = Self.lastInstant(in: evidence, before: event.time) ?? start
                    spans.append(Span(start: start, end: max(start, last)))
                }
                openedAt = event.time
            case .screenOff:
                if let start = openedAt {
                    spans.append(Span(start: start, end: event.time))
                    openedAt = nil
                } else {
                    repairs.repeatedScreenOffs += 1
                }
            case .locked, .unlocked, .other:
                break
            }
        }
        if let start = openedAt { spans.append(Span(start: start, end: log.end)) }
        return spans.filter { !$0.isEmpty }
    }

    /// The spans during which the phone was unlocked, over the whole trace.
    private func unlockedSpans() -> [Span] {
        let lockEvents = log.deviceEvents.filter { $0.kind == .locked || $0.kind == .unlocked }
        guard let first = lockEvents.first else { return [Span(start: log.start, end: log.end)] }
        var unlockedSince: Instant? = first.kind == .locked ? log.start : nil
        var spans: [Span] = []
        for event in log.deviceEvents {
            let locks = event.kind == .locked || (event.kind == .screenOff && event.source == .prospective)
            if locks, let since = unlockedSince {
                spans.append(Span(start: since, end: event.time))
                unlockedSince = nil
            } else if event.kind == .unlocked, unlockedSince == nil {
                unlockedSince = event.time
            }
        }
        if let since = unlockedSince { spans.append(Span(start: since, end: log.end)) }
        return spans.filter { !$0.isEmpty }
    }

    // MARK: Raw sessions

    /// Sessions from the retrospective (activity-level) events.
    private mutating func retrospectiveSessions() -> [RawSession] {
        let events = log.appEvents.filter { $0.source == .retrospective }
        var sessions: [RawSession] = []
        var openSince: [String: Instant] = [:]
        var closedAt: [String: Instant] = [:]
        func finish(_ app: String) {
            guard let start = openSince.removeValue(forKey: app), let end = closedAt.removeValue(forKey: app) else {
                return
            }
            sessions.append(RawSession(app: app, start: start, end: end))
        }
        for event in events {
            for app in closedAt.keys.sorted() where event.time - closedAt[app]! >= rules.activitySwitchGap {
                finish(app)
            }
            if event.isOpen {
                for app in closedAt.keys.sorted() where app != event.app { finish(app) }
                for app in openSince.keys.sorted() where app != event.app {
                    repairs.sessionsEndedByAnotherOpen += 1
                    closedAt[app] = event.time
                    finish(app)
                }
                if closedAt.removeValue(forKey: event.app) != nil {
                    repairs.mergedActivitySwitches += 1
                } else if openSince[event.app] != nil {
                    repairs.repeatedOpens += 1
                } else {
                    openSince[event.app] = event.time
                }
            } else if openSince[event.app] != nil, closedAt[event.app] == nil {
                closedAt[event.app] = event.time
            } else {
                repairs.orphanCloses += 1
            }
        }
        for app in closedAt.keys.sorted() { finish(app) }
        for (app, start) in openSince.sorted(by: { $0.key < $1.key }) {
            // Still open when the retrospective log stops: end at the first later prospective event, else at the end.
            let handoff = log.appEvents.first { $0.source == .prospective && $0.time >= start }?.time
            let deviceHandoff = log.deviceEvents.first { $0.source == .prospective && $0.time >= start }?.time
            let end = [handoff, deviceHandoff].compactMap { $0 }.min() ?? log.end
            sessions.append(RawSession(app: app, start: start, end: end))
        }
        return sessions
    }

    /// Sessions from the prospective poll: each open lasts until the next open or screen-off, and the app on top
    /// is resumed when the screen comes back on.
    private mutating func prospectiveSessions() -> [RawSession] {
        enum Step {
            case open(String)
            case screenOn
            case screenOff
        }
        var steps: [(time: Instant, step: Step)] = []
        steps += log.appEvents.filter { $0.source == .prospective }.map { ($0.time, Step.open($0.app)) }
        steps += log.deviceEvents.filter { $0.source == .prospective }.compactMap { event in
            switch event.kind {
            case .screenOn: (event.time, Step.screenOn)
            case .screenOff: (event.time, Step.screenOff)
            default: nil
            }
        }
        // Stable: app events first at equal times (the order does not change the result).
        steps = steps.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        guard let firstTime = steps.first?.time else { return [] }
        var sessions: [RawSession] = []
        var screenIsOn = screenOn.contains { $0.contains(firstTime) }
        var top: String?
        var topSince = firstTime
        var resumed = false
        func emit(until end: Instant) {
            if let app = top, screenIsOn, topSince < end {
                sessions.append(RawSession(app: app, start: topSince, end: end, resumed: resumed))
            }
        }
        for (time, step) in steps {
            switch step {
            case .open(let app):
                if app == top, screenIsOn {
                    repairs.repeatedOpens += 1
                    continue
                }
                emit(until: time)
                top = app
                topSince = time
                resumed = false
            case .screenOff:
                emit(until: time)
                screenIsOn = false
            case .screenOn:
                guard !screenIsOn else { continue }
                screenIsOn = true
                topSince = time
                resumed = true
            }
        }
        emit(until: log.end)
        return sessions
    }

    // MARK: Clipping and merging

    /// Merges sessions of one app that overlap or touch, and sorts by start then app.
    private mutating func coalesce(_ sessions: [AppSession]) -> [AppSession] {
        var merged: [AppSession] = []
        for app in Set(sessions.map(\.app)).sorted() {
            var current: AppSession?
            for session in sessions.filter({ $0.app == app }).sorted(by: { $0.start < $1.start }) {
                if let open = current, session.start <= open.end {
                    repairs.coalescedSessions += 1
                    current = AppSession(app: app, start: open.start, end: max(open.end, session.end))
                } else {
                    if let open = current { merged.append(open) }
                    current = session
                }
            }
            if let open = current { merged.append(open) }
        }
        return merged.sorted { ($0.start, $0.app) < ($1.start, $1.app) }
    }

    /// The parts of `span` inside the sorted, disjoint `spans`.
    static func pieces(of span: Span, in spans: [Span]) -> [Span] {
        spans.compactMap { $0.intersection(span) }
    }

    /// The instants inside both sorted, disjoint span lists.
    static func intersect(_ first: [Span], _ second: [Span]) -> [Span] {
        var result: [Span] = []
        var i = 0
        var j = 0
        while i < first.count, j < second.count {
            if let shared = first[i].intersection(second[j]) { result.append(shared) }
            if first[i].end < second[j].end { i += 1 } else { j += 1 }
        }
        return result
    }

    /// The last instant of the sorted `instants` strictly before `limit`.
    static func lastInstant(in instants: [Instant], before limit: Instant) -> Instant? {
        var low = 0
        var high = instants.count
        while low < high {
            let mid = (low + high) / 2
            if instants[mid] < limit { low = mid + 1 } else { high = mid }
        }
        return low > 0 ? instants[low - 1] : nil
    }
}
