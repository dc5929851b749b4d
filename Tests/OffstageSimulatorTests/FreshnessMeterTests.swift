import OffstageCore
import OffstageSimulator
import Testing

@Suite("Freshness")
struct FreshnessMeterTests {
    let trace: UsageTrace

    init() throws {
        let sessions = [
            AppSession(app: "A", span: span(100, 110)), AppSession(app: "B", span: span(120, 130)),
            AppSession(app: "A", span: span(200, 210)), AppSession(app: "B", span: span(250, 260)),
            AppSession(app: "A", span: span(300, 310)), AppSession(app: "A", span: span(400, 410)),
        ]
        trace = try UsageTrace(name: "t", start: at(0), end: at(1000), sessions: sessions, screenOn: [span(0, 1000)])
    }

    @Test("Fresh opens, ages, median and p90 on hand-made refreshes")
    func handMade() {
        // Each refresh runs 5 s and completes at the instant given.
        let completions = ["A": [at(50), at(150), at(160), at(390)], "B": [at(250)]]
        let report = FreshnessMeter().measure(trace, refreshes: completions.mapValues { $0.map { Span(start: $0 - .seconds(5), end: $0) } })
        // A@100: refreshed at 50, first open → fresh, 50 s. A@200: 160 > 100 → fresh, 40 s.
        // A@300: latest 160 is before the previous open → stale, 140 s. A@400: 390 → fresh, 10 s.
        // B@120: never refreshed → stale, 120 s since the trace began. B@250: completes at the open → fresh, 0 s.
        #expect(report.opens == 6)
        #expect(report.freshOpens == 4)
        #expect(report.neverRefreshedOpens == 1)
        #expect(abs(report.freshShare - 4.0 / 6) < 1e-12)
        #expect(report.ages == [0, 10, 40, 50, 120, 140].map { Duration.seconds($0) })
        #expect(report.medianAge == .seconds(45))
        #expect(report.p90Age == .seconds(130))
        #expect(report.perApp["A"] == .init(opens: 4, freshOpens: 3))
        #expect(report.perApp["B"] == .init(opens: 2, freshOpens: 1))
    }

    @Test("SCH-7, decision 0046: a refresh that started before the previous open and completed during it does not make the next open fresh; one started after it does")
    func refreshedSinceThePreviousOpenMeansStartedAfterIt() {
        // A is opened at 100 (until 110) and 200. A refresh from 95 to 105 completes while the user is in the app:
        // they saw its update then; the open at 200 is not fresh by it. One from 110 to 115 makes it fresh.
        let during = FreshnessMeter().measure(trace, refreshes: ["A": [span(95, 105)]])
        #expect(during.perApp["A"]?.freshOpens == 0, "it completed after the first open and started before it")
        let after = FreshnessMeter().measure(trace, refreshes: ["A": [span(95, 105), span(110, 115)]])
        #expect(after.perApp["A"]?.freshOpens == 1, "the open at 200")
        // A refresh that started after the previous open counts even when it completes at the instant of the open.
        let atTheOpen = FreshnessMeter().measure(trace, refreshes: ["A": [span(90, 100), span(190, 200)]])
        #expect(atTheOpen.perApp["A"]?.freshOpens == 2)
    }

    @Test("Without refreshes nothing is fresh and ages run from the trace's start")
    func neverRefreshed() {
        let report = FreshnessMeter().measure(trace, refreshes: [:])
        #expect(report.freshOpens == 0)
        #expect(report.neverRefreshedOpens == 6)
        #expect(report.ages.first == .seconds(100) && report.ages.last == .seconds(400))
    }

    @Test("No opens: share 0 and no ages")
    func noOpens() {
        let report = FreshnessMeter().measure(sessions: [], refreshes: [:], since: at(0))
        #expect(report.opens == 0 && report.freshShare == 0 && report.medianAge == nil && report.p90Age == nil)
    }

    @Test("Quantiles interpolate between ranks")
    func quantiles() {
        #expect(Quantile.of(sorted: [1, 2, 3, 4], 0.5) == 2.5)
        #expect(abs(Quantile.of(sorted: [1, 2, 3, 4], 0.9) - 3.7) < 1e-12)
        #expect(Quantile.of(sorted: [Duration.seconds(7)], 0.9) == .seconds(7))
    }
}
