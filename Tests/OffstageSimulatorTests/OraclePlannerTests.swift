import OffstageCore
import OffstageSimulator
import Testing

@Suite("Oracle planner")
struct OraclePlannerTests {
    @Test("Free refreshes at the latest screen-on moment, shared wake-ups, and a missed window, by hand")
    func handMade() throws {
        let sessions = [
            AppSession(app: "E", span: span(101, 105)), AppSession(app: "A", span: span(150, 160)),
            AppSession(app: "A", span: span(165, 170)), AppSession(app: "B", span: span(502, 504)),
            AppSession(app: "C", span: span(505, 507)), AppSession(app: "A", span: span(550, 560)),
            AppSession(app: "D", span: span(590, 595)),
        ]
        let trace = try UsageTrace(
            name: "t", start: at(0), end: at(1000), sessions: sessions, screenOn: [span(100, 200), span(500, 600)])
        let plan = OraclePlanner(refreshDuration: .seconds(10), horizon: .seconds(300)).plan(trace)
        // E@101: window [0, 91], all screen-off → wake-up at 91.
        // A@150: window [0, 140], screen on from 100 → free at 140.
        // A@165: window [150, 155] minus A's own session [150, 160) → missed.
        // B@502: window [202, 492], screen off → wake-up at 492; C@505: window [205, 495] shares it.
        // A@550: window [250, 540], screen on from 500 → free at 540. D@590: free at 580.
        #expect(
            plan.refreshes == [
                PlannedRefresh(at: at(91), app: "E"), PlannedRefresh(at: at(140), app: "A"),
                PlannedRefresh(at: at(492), app: "B"), PlannedRefresh(at: at(492), app: "C"),
                PlannedRefresh(at: at(540), app: "A"), PlannedRefresh(at: at(580), app: "D"),
            ])
        #expect(plan.wakeUps == [at(91), at(492)])
        #expect(plan.freeRefreshes == 3)
        #expect(plan.missedWindows == 1)
        #expect(plan.opens == 7)
        let freshness = FreshnessMeter().measure(trace, refreshes: plan.refreshSpans)
        #expect(freshness.freshOpens == 6)
        let energy = EnergyMeter().measure(DeviceTimeline(trace: trace, runs: plan.runs()))
        #expect(energy.wakeUps == 2)
    }

    @Test("A free refresh uses the last nanosecond of screen-on time when the window outlasts it")
    func lastNanosecond() throws {
        let sessions = [AppSession(app: "A", span: span(500, 510))]
        let trace = try UsageTrace(
            name: "t", start: at(0), end: at(1000), sessions: sessions, screenOn: [span(100, 200), span(500, 600)])
        let plan = OraclePlanner(refreshDuration: .seconds(10), horizon: .seconds(1000)).plan(trace)
        #expect(plan.refreshes == [PlannedRefresh(at: at(200) - .nanoseconds(1), app: "A")])
        #expect(plan.wakeUps.isEmpty)
    }

    /// A random small trace on a whole-second grid, with a refresh duration and horizon.
    struct Case {
        var trace: UsageTrace
        var duration: Int
        var horizon: Int
    }

    static func randomCase(_ random: inout SeededGenerator) throws -> Case {
        let end = 200
        var spans: [Span] = []
        var cursor = random.index(below: 20)
        while cursor < end {
            let length = 1 + random.index(below: 25)
            let stop = min(end, cursor + length)
            spans.append(span(Double(cursor), Double(stop)))
            cursor = stop + 1 + random.index(below: 40)
        }
        var sessions: [AppSession] = []
        for app in ["a", "b", "c"].prefix(1 + random.index(below: 3)) {
            var taken: [Span] = []
            for _ in 0..<(1 + random.index(below: 4)) {
                let host = spans[random.index(below: spans.count)]
                let hostStart = Int(host.start.secondsSinceEpoch - at(0).secondsSinceEpoch)
                let hostEnd = Int(host.end.secondsSinceEpoch - at(0).secondsSinceEpoch)
                let start = hostStart + random.index(below: hostEnd - hostStart)
                let stop = start + 1 + random.index(below: hostEnd - start)
                let candidate = span(Double(start), Double(stop))
                if taken.contains(where: { $0.overlaps(candidate) }) { continue }
                taken.append(candidate)
                sessions.append(AppSession(app: app, span: candidate))
            }
        }
        sessions.sort { ($0.start, $0.app) < ($1.start, $1.app) }
        let trace = try UsageTrace(name: "random", start: at(0), end: at(Double(end)), sessions: sessions, screenOn: spans)
        return Case(trace: trace, duration: 1 + random.index(below: 10), horizon: 5 + random.index(below: 80))
    }

    /// The fewest instants hitting every set, by exhaustive search over the sets' right ends (some optimal
    /// solution uses only right ends of intervals).
    static func bruteForceMinimum(_ sets: [[Int]]) -> Int {
        guard !sets.isEmpty else { return 0 }
        let candidates = Array(Set(sets.map { $0.max()! })).sorted()
        var best = candidates.count
        for mask in 0..<(1 << candidates.count) where mask.nonzeroBitCount < best {
            let chosen = candidates.indices.filter { mask & (1 << $0) != 0 }.map { candidates[$0] }
            if sets.allSatisfy({ set in chosen.contains { set.contains($0) } }) { best = mask.nonzeroBitCount }
        }
        return best
    }

    @Test("On 500 seeded random cases the plan uses the brute-force minimum of wake-ups and keeps every promise")
    func optimalAgainstBruteForce() throws {
        var random = SeededGenerator(seed: 20_260_101)
        var sharedWakeUps = 0
        var casesWithSeveralWakeUps = 0
        for _ in 0..<500 {
            let testCase = try Self.randomCase(&random)
            let trace = testCase.trace
            let planner = OraclePlanner(
                refreshDuration: .seconds(testCase.duration), horizon: .seconds(testCase.horizon))
            let plan = planner.plan(trace)

            // Independent windows on the grid: allowed start seconds, whether one has the screen on.
            var screenOffSets: [[Int]] = []
            var missed = 0
            var free = 0
            for app in trace.apps {
                let own = trace.sessions(of: app)
                for (index, session) in own.enumerated() {
                    let open = Int((session.start - at(0)).inSeconds.rounded())
                    let previous = index > 0 ? Int((own[index - 1].start - at(0)).inSeconds.rounded()) : 0
                    let low = max(previous, open - testCase.horizon)
                    let high = open - testCase.duration
                    let allowed = low > high ? [] : (low...high).filter { second in
                        !own.contains { $0.span.contains(at(Double(second))) }
                    }
                    if allowed.isEmpty {
                        missed += 1
                    } else if allowed.contains(where: { trace.isScreenOn(at: at(Double($0))) }) {
                        free += 1
                    } else {
                        screenOffSets.append(allowed)
                    }
                }
            }
            #expect(plan.missedWindows == missed)
            #expect(plan.freeRefreshes == free)
            #expect(plan.wakeUps.count == Self.bruteForceMinimum(screenOffSets))
            sharedWakeUps += screenOffSets.count - plan.wakeUps.count
            if plan.wakeUps.count > 1 { casesWithSeveralWakeUps += 1 }
            #expect(plan.wakeUps.allSatisfy { !trace.isScreenOn(at: $0) })
            #expect(plan.refreshes.count == plan.opens - plan.missedWindows)
            // Every open with a usable window is fresh; the others are not.
            let freshness = FreshnessMeter().measure(trace, refreshes: plan.refreshSpans)
            #expect(freshness.freshOpens == plan.opens - plan.missedWindows)
            // Free refreshes are as late as possible: at the window's end or the screen's last on-nanosecond.
            for refresh in plan.refreshes where trace.isScreenOn(at: refresh.at) {
                let next = refresh.at + .nanoseconds(1)
                let atWindowEnd = trace.sessions(of: refresh.app).contains {
                    $0.start - .seconds(testCase.duration) == refresh.at
                }
                #expect(atWindowEnd || !trace.isScreenOn(at: next))
            }
        }
        // The cases exercise the interesting part: several wake-ups, and windows sharing one.
        #expect(casesWithSeveralWakeUps > 50)
        #expect(sharedWakeUps > 20)
    }
}
