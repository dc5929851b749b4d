import Foundation
import OffstageCore
import OffstageSimulator
import Testing

/// Builds the two Usage Logger files from rows whose times are seconds after 2020-01-01T00:00:00Z.
struct UsageLoggerFiles {
    static let retrospective = "retrospective_usagestats"
    static let prospective = "prospective_foreground_poll"
    var appRows: [String] = ["user_id,app_id,event,timestamp,source"]
    var deviceRows: [String] = ["user_id,event,app_id,timestamp,source"]

    static func timestamp(_ seconds: Double) -> String {
        let milliseconds = Int((seconds * 1000).rounded())
        let whole = milliseconds / 1000
        return String(
            format: "2020-01-01T%02d:%02d:%02d.%03dZ", whole / 3600, whole % 3600 / 60, whole % 60, milliseconds % 1000)
    }

    static func instant(_ seconds: Double) -> Instant { Instant(iso8601: timestamp(seconds))! }

    mutating func app(_ label: String, _ event: String, _ seconds: Double, _ source: String = retrospective) {
        appRows.append("u0,\(label),\(event),\(Self.timestamp(seconds)),\(source)")
    }

    mutating func device(_ event: String, _ seconds: Double, _ source: String = retrospective) {
        deviceRows.append("u0,\(event),Android system,\(Self.timestamp(seconds)),\(source)")
    }

    func load(_ rules: UsageLoggerTrace.Rules = .init()) throws -> UsageLoggerTrace {
        try UsageLoggerTrace.parse(
            appEventsCSV: appRows.joined(separator: "\n"), deviceEventsCSV: deviceRows.joined(separator: "\n"),
            rules: rules)
    }
}

/// The sessions of a loaded trace as (app, start, end) in seconds after the files' origin.
func sessionTriples(_ trace: UsageTrace) -> [String] {
    let origin = UsageLoggerFiles.instant(0)
    return trace.sessions.map { session in
        let start = (session.start - origin).inSeconds
        let end = (session.end - origin).inSeconds
        return "\(session.app) \(start)-\(end)"
    }
}

@Suite("Usage Logger trace: the real files")
struct UsageLoggerRealTraceTests {
    let loaded: UsageLoggerTrace

    init() throws {
        loaded = try UsageLoggerTrace.read(appEvents: TestSupport.appEvents, deviceEvents: TestSupport.deviceEvents)
    }

    @Test("The real trace loads, keeps every invariant and spans the files' first to last event")
    func loadsAndValidates() throws {
        let trace = loaded.trace
        try trace.validate()
        #expect(trace.start == Instant(iso8601: "2019-10-15T14:53:27.258Z"))
        #expect(trace.end == Instant(iso8601: "2019-10-17T06:55:59.788Z"))
        #expect(trace.apps.count == 17)
        #expect(trace.sessions.count == 158)
        #expect(trace.screenOn.count == 139)
        #expect(abs(trace.screenOnTime.inSeconds / 3600 - 5.9254) < 0.001)
        #expect(Set(trace.apps).isDisjoint(with: UsageLoggerTrace.Rules.notUserApps))
        let loadedAgain = try UsageLoggerTrace.load(appEvents: TestSupport.appEvents, deviceEvents: TestSupport.deviceEvents)
        #expect(loadedAgain == trace, "loading is deterministic")
    }

    @Test("Opens per app on the real trace: the ten most opened")
    func opensPerApp() {
        let top = TraceSummary(loaded.trace).opensByApp.prefix(10).map { "\($0.app) \($0.opens)" }
        #expect(
            top == [
                "WhatsApp 39", "Chrome 26", "YouTube 16", "Audible 13", "Polytopia 13", "Phone 11", "TikTok 8",
                "Gmail 7", "Clock 5", "Messages 5",
            ])
    }

    @Test("The real data needs each documented repair, as often as counted here")
    func repairsOnRealData() {
        let repairs = loaded.repairs
        #expect(repairs.missingScreenOffs == 8, "eight restarts without a screen-off")
        #expect(repairs.repeatedScreenOffs == 0)
        #expect(repairs.mergedActivitySwitches == 197)
        #expect(repairs.sessionsEndedByAnotherOpen == 4)
        #expect(repairs.resumedSessions == 27)
        #expect(repairs.lockScreenSessions == 55)
        #expect(repairs.sessionsOutsideScreenOn == 1)
        #expect(repairs.coalescedSessions == 0)
    }

    @Test("Counting lock-screen glances as opens gives more sessions")
    func glancesCounted() throws {
        let loose = try UsageLoggerTrace.read(
            appEvents: TestSupport.appEvents, deviceEvents: TestSupport.deviceEvents,
            rules: .init(requiresUnlock: false))
        #expect(loose.trace.sessions.count == 212)
        #expect(loose.repairs.lockScreenSessions == 0)
        #expect(loose.trace.screenOn == loaded.trace.screenOn)
    }
}

@Suite("Usage Logger trace: each rule on hand-written files")
struct UsageLoggerRuleTests {
    @Test("Activity switches: a close and re-open of one app under 2 s apart are one session")
    func activitySwitchesMerge() throws {
        var files = UsageLoggerFiles()
        files.device("screen_interactive", 0)
        files.app("A", "open", 1)
        files.app("A", "close", 10)
        files.app("A", "open", 10.5)
        files.app("A", "close", 20)
        files.app("A", "open", 22.5)
        files.app("A", "close", 30)
        files.device("screen_non_interactive", 100)
        let loaded = try files.load()
        #expect(sessionTriples(loaded.trace) == ["A 1.0-20.0", "A 22.5-30.0"])
        #expect(loaded.repairs.mergedActivitySwitches == 1)
    }

    @Test("Another app opened in between keeps a close and re-open apart")
    func otherAppSeparates() throws {
        var files = UsageLoggerFiles()
        files.device("screen_interactive", 0)
        files.app("A", "open", 1)
        files.app("A", "close", 10)
        files.app("B", "open", 10.1)
        files.app("B", "close", 11)
        files.app("A", "open", 11.5)
        files.app("A", "close", 20)
        files.device("screen_non_interactive", 100)
        let loaded = try files.load()
        #expect(sessionTriples(loaded.trace) == ["A 1.0-10.0", "B 10.1-11.0", "A 11.5-20.0"])
        #expect(loaded.repairs.mergedActivitySwitches == 0)
    }

    @Test("A session whose close is missing ends at the next app's open")
    func missingCloseEndsAtNextOpen() throws {
        var files = UsageLoggerFiles()
        files.device("screen_interactive", 0)
        files.app("A", "open", 1)
        files.app("B", "open", 10)
        files.app("B", "close", 12)
        files.device("screen_non_interactive", 100)
        let loaded = try files.load()
        #expect(sessionTriples(loaded.trace) == ["A 1.0-10.0", "B 10.0-12.0"])
        #expect(loaded.repairs.sessionsEndedByAnotherOpen == 1)
    }

    @Test("Repeated opens and orphan closes are ignored")
    func repeatedOpensAndOrphanCloses() throws {
        var files = UsageLoggerFiles()
        files.device("screen_interactive", 0)
        files.app("A", "close", 0.5)
        files.app("A", "open", 1)
        files.app("A", "open", 2)
        files.app("A", "close", 5)
        files.device("screen_non_interactive", 100)
        let loaded = try files.load()
        #expect(sessionTriples(loaded.trace) == ["A 1.0-5.0"])
        #expect(loaded.repairs.orphanCloses == 1)
        #expect(loaded.repairs.repeatedOpens == 1)
    }

    @Test("Prospective opens last until the next open or screen-off; the app on top resumes at screen-on")
    func prospectiveSessions() throws {
        var files = UsageLoggerFiles()
        let poll = UsageLoggerFiles.prospective
        files.device("screen_on", 0, poll)
        files.app("A", "open", 5, poll)
        files.app("B", "open", 10, poll)
        files.device("screen_off", 20, poll)
        files.device("screen_on", 30, poll)
        files.device("screen_off", 40, poll)
        files.device("screen_on", 50, poll)
        files.app("C", "open", 52, poll)
        files.device("screen_off", 60, poll)
        let loaded = try files.load()
        #expect(
            sessionTriples(loaded.trace) == ["A 5.0-10.0", "B 10.0-20.0", "B 30.0-40.0", "B 50.0-52.0", "C 52.0-60.0"])
        #expect(loaded.repairs.resumedSessions == 2)
        #expect(loaded.trace.screenOn.count == 3)
    }

    @Test("A screen-on while the screen is on ends the open span at the last event before it")
    func missingScreenOff() throws {
        var files = UsageLoggerFiles()
        files.device("screen_interactive", 0)
        files.app("A", "open", 1)
        files.app("A", "close", 5)
        files.device("screen_interactive", 100)
        files.app("B", "open", 101)
        files.app("B", "close", 105)
        files.device("screen_non_interactive", 110)
        files.device("screen_non_interactive", 120)
        let loaded = try files.load()
        let origin = UsageLoggerFiles.instant(0)
        #expect(loaded.trace.screenOn.map { ($0.start - origin).inSeconds } == [0, 100])
        #expect(loaded.trace.screenOn.map { ($0.end - origin).inSeconds } == [5, 110])
        #expect(loaded.repairs.missingScreenOffs == 1)
        #expect(loaded.repairs.repeatedScreenOffs == 1)
        #expect(sessionTriples(loaded.trace) == ["A 1.0-5.0", "B 101.0-105.0"])
    }

    @Test("Sessions are clipped to screen-on time, split across a screen-off, dropped if wholly outside")
    func clippedToScreenOn() throws {
        var files = UsageLoggerFiles()
        files.device("screen_interactive", 0)
        files.app("A", "open", 5)
        files.device("screen_non_interactive", 10)
        files.device("screen_interactive", 60)
        files.app("A", "close", 65)
        files.device("screen_non_interactive", 70)
        files.app("B", "open", 80)
        files.app("B", "close", 90)
        files.device("screen_interactive", 200)
        files.device("screen_non_interactive", 210)
        let loaded = try files.load()
        #expect(sessionTriples(loaded.trace) == ["A 5.0-10.0", "A 60.0-65.0"])
        #expect(loaded.repairs.clippedSessions == 1)
        #expect(loaded.repairs.splitSessions == 1)
        #expect(loaded.repairs.sessionsOutsideScreenOn == 1)
    }

    @Test("Foreground time counts only while unlocked: a glance at the lock screen is no open")
    func lockScreenGlances() throws {
        var files = UsageLoggerFiles()
        files.device("screen_interactive", 0)
        files.app("A", "close", 0.3)
        files.app("A", "open", 0.31)
        files.device("keyguard_hidden", 2)
        files.app("A", "open", 2.1)
        files.device("screen_non_interactive", 10)
        files.app("A", "close", 10.2)
        files.device("keyguard_shown", 11)
        files.device("screen_interactive", 20)
        files.app("A", "close", 20.3)
        files.app("A", "open", 20.31)
        files.device("screen_non_interactive", 23)
        files.app("A", "close", 23.2)
        let strict = try files.load()
        #expect(sessionTriples(strict.trace) == ["A 2.0-10.0"])
        #expect(strict.repairs.lockScreenSessions == 1)
        let loose = try files.load(.init(requiresUnlock: false))
        #expect(sessionTriples(loose.trace) == ["A 0.31-10.0", "A 20.31-23.0"])
    }

    @Test("In the prospective log a screen-off locks and user_present unlocks")
    func prospectiveLocking() throws {
        var files = UsageLoggerFiles()
        let poll = UsageLoggerFiles.prospective
        files.device("screen_on", 0, poll)
        files.device("user_present", 2, poll)
        files.app("A", "open", 3, poll)
        files.device("screen_off", 10, poll)
        files.device("screen_on", 20, poll)
        files.device("screen_off", 25, poll)
        files.device("screen_on", 30, poll)
        files.app("B", "open", 31, poll)
        files.device("user_present", 33, poll)
        files.device("screen_off", 40, poll)
        let loaded = try files.load()
        #expect(sessionTriples(loaded.trace) == ["A 3.0-10.0", "B 33.0-40.0"])
        #expect(loaded.repairs.lockScreenSessions == 2, "A, left on top, resumed behind the lock screen at 20 and 30")
    }

    @Test("Excluded labels are dropped, but their opens still end other apps' sessions")
    func excludedLabels() throws {
        var files = UsageLoggerFiles()
        files.device("screen_interactive", 0)
        files.app("A", "open", 1)
        files.app("Quickstep", "open", 5)
        files.app("Quickstep", "close", 8)
        files.app("Settings", "open", 8.01)
        files.app("Settings", "close", 9)
        files.device("screen_non_interactive", 100)
        let loaded = try files.load()
        #expect(sessionTriples(loaded.trace) == ["A 1.0-5.0"])
        #expect(loaded.repairs.excludedSessions == 2)
        #expect(loaded.trace.apps == ["A"])
        let all = try files.load(.init(excludedLabels: []))
        #expect(all.trace.apps == ["A", "Quickstep", "Settings"])
    }

    @Test("Malformed files are rejected with the file, line and value")
    func errors() {
        var files = UsageLoggerFiles()
        files.device("screen_interactive", 0)
        files.appRows.append("u0,A,launch,2020-01-01T00:00:01.000Z,retrospective_usagestats")
        #expect(throws: UsageLoggerError.unknownValue(file: "app events", line: 2, column: "event", value: "launch")) {
            try files.load()
        }
        var badTime = UsageLoggerFiles()
        badTime.deviceRows.append("u0,screen_on,,yesterday,prospective_foreground_poll")
        #expect(throws: UsageLoggerError.badTimestamp(file: "device events", line: 2, text: "yesterday")) {
            try badTime.load()
        }
        #expect(throws: UsageLoggerError.missingColumn(file: "app events", column: "source")) {
            try UsageLoggerTrace.parse(appEventsCSV: "app_id,event,timestamp\n", deviceEventsCSV: "event,timestamp,source\n")
        }
        #expect(throws: UsageLoggerError.noEvents) { try UsageLoggerFiles().load() }
    }
}
