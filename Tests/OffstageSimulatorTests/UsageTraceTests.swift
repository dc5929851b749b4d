import OffstageCore
import OffstageSimulator
import Testing

@Suite("Usage traces")
struct UsageTraceTests {
    let screen = [span(0, 100), span(200, 300)]

    func trace(_ sessions: [AppSession], screenOn: [Span]? = nil, apps: [String]? = nil) throws(UsageTraceError)
        -> UsageTrace
    {
        try UsageTrace(name: "t", start: at(0), end: at(400), apps: apps, sessions: sessions, screenOn: screenOn ?? screen)
    }

    @Test("A valid trace keeps its sessions and spans, and lists its apps sorted")
    func validTrace() throws {
        let sessions = [
            AppSession(app: "b", span: span(10, 20)), AppSession(app: "a", span: span(15, 30)),
            AppSession(app: "a", span: span(30, 40)),
        ]
        let trace = try trace(sessions)
        #expect(trace.apps == ["a", "b"])
        #expect(trace.opens(of: "a") == [at(15), at(30)])
        #expect(trace.isScreenOn(at: at(99.9)) && !trace.isScreenOn(at: at(100)))
        #expect(trace.screenOnTime == .seconds(200))
        #expect(trace.foregroundTime == .seconds(35))
        #expect(abs(trace.days - 400.0 / 86_400) < 1e-12)
    }

    @Test("Each broken invariant is named in the error")
    func invariants() {
        #expect(throws: UsageTraceError.endsBeforeStart(start: at(5), end: at(1))) {
            try UsageTrace(name: "t", start: at(5), end: at(1), sessions: [], screenOn: [])
        }
        #expect(throws: UsageTraceError.appsNotSortedAndDistinct(["b", "a"])) { try trace([], apps: ["b", "a"]) }
        let unknown = AppSession(app: "z", span: span(1, 2))
        #expect(throws: UsageTraceError.unknownApp(unknown)) { try trace([unknown], apps: ["a"]) }
        let empty = AppSession(app: "a", span: span(5, 5))
        #expect(throws: UsageTraceError.emptySession(empty)) { try trace([empty]) }
        let late = AppSession(app: "a", span: span(50, 60))
        let early = AppSession(app: "b", span: span(10, 20))
        #expect(throws: UsageTraceError.sessionsNotSortedByStart(early, after: late)) { try trace([late, early]) }
        let first = AppSession(app: "a", span: span(10, 30))
        let second = AppSession(app: "a", span: span(20, 40))
        #expect(throws: UsageTraceError.overlappingSessions(first, second)) { try trace([first, second]) }
        let dark = AppSession(app: "a", span: span(90, 110))
        #expect(throws: UsageTraceError.sessionOutsideScreenOn(dark)) { try trace([dark]) }
        #expect(throws: UsageTraceError.emptyScreenOnSpan(span(3, 3))) { try trace([], screenOn: [span(3, 3)]) }
        #expect(throws: UsageTraceError.screenOnNotSortedAndDisjoint(span(50, 150), after: span(0, 100))) {
            try trace([], screenOn: [span(0, 100), span(50, 150)])
        }
        #expect(throws: UsageTraceError.screenOnOutsideTrace(span(350, 450))) { try trace([], screenOn: [span(350, 450)]) }
        let outside = AppSession(app: "a", span: span(-10, 5))
        #expect(throws: UsageTraceError.sessionOutsideTrace(outside)) { try trace([outside], screenOn: [span(0, 10)]) }
    }

    @Test("The error's description names the invariant")
    func errorDescription() {
        let error = UsageTraceError.overlappingSessions(
            AppSession(app: "a", span: span(0, 2)), AppSession(app: "a", span: span(1, 3)))
        #expect(error.description.contains("sessions of one app never overlap"))
    }

    @Test("Spans are half-open: touching spans share no instant")
    func halfOpenSpans() {
        #expect(!span(0, 10).overlaps(span(10, 20)))
        #expect(span(0, 10).intersection(span(10, 20)) == nil)
        #expect(span(0, 10).intersection(span(5, 20)) == span(5, 10))
        #expect(span(0, 10).contains(at(0)) && !span(0, 10).contains(at(10)))
        #expect(span(0, 10).contains(span(2, 10)))
    }

    @Test("A trace summary counts glances, single-app sessions and hours")
    func summary() throws {
        let sessions = [
            AppSession(app: "a", span: span(10, 20)), AppSession(app: "b", span: span(22, 25)),
            AppSession(app: "a", span: span(210, 212)),
        ]
        let trace = try UsageTrace(
            name: "t", start: at(0), end: at(86_400), sessions: sessions,
            screenOn: [span(0, 100), span(200, 300), span(400, 405)])
        let summary = TraceSummary(trace)
        #expect(summary.screenSessionsPerDay == 3)
        #expect(abs(summary.glanceShare - 1.0 / 3) < 1e-12)
        #expect(summary.singleAppShare == 0.5)
        #expect(summary.appSessionsPerScreenSession == 1.5)
        #expect(summary.medianSessionLength == .seconds(3))
        #expect(summary.shortSessionShare == 1)
        #expect(summary.opensByApp.map(\.app) == ["a", "b"])
        #expect(summary.opensByHour.reduce(0, +) == 3)
    }

    @Test("ISO 8601 timestamps parse exactly, to the nanosecond")
    func iso8601() {
        #expect(Instant(iso8601: "1970-01-01T00:00:00Z") == Instant.epoch)
        #expect(Instant(iso8601: "2019-10-15T14:53:27.619Z")?.nanosecondsSinceEpoch == 1_571_151_207_619_000_000)
        #expect(Instant(iso8601: "2026-01-01T00:00:00.000000001Z")?.nanosecondsSinceEpoch == 1_767_225_600_000_000_001)
        #expect(Instant(iso8601: "2024-02-29T12:00:00Z")?.nanosecondsSinceEpoch == 1_709_208_000_000_000_000)
        #expect(Instant(iso8601: "2019-10-15T14:53:27+02:00") == nil)
        #expect(Instant(iso8601: "2019-10-15 14:53:27Z") == nil)
    }

    @Test("CSV fields may be quoted, with commas, quotes and line breaks inside")
    func csvQuoting() {
        let table = CSVTable(parsing: "a,b\n\"x, y\",\"say \"\"hi\"\"\"\n\n\"two\nlines\",z\n")
        #expect(table.header == ["a", "b"])
        #expect(table.rows.map(\.fields) == [["x, y", "say \"hi\""], ["two\nlines", "z"]])
        #expect(table.rows.map(\.line) == [2, 4])
    }
}
