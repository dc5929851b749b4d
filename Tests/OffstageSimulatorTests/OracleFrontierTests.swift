import OffstageCore
import OffstageSimulator
import Testing

/// A hand-made trace whose frontier is known (d = 10 s, slack 1 s, so windows end 11 s before the open).
///
/// Screen on [0, 100), [200, 300), [400, 500), [600, 700). A's two opens are missed (its first 10 s after the start,
/// its second 5 s after it left); eight opens have screen-on time in their window; the rest wait in screen-off
/// gaps: three in [100, 200) (B, C, I), one in [300, 400) (D), two in [500, 600) (F, G). So the frontier is
/// 8, 11, 13, 14 fresh opens of 16 with 0, 1, 2, 3 wake-ups.
func frontierHandTrace() throws -> UsageTrace {
    let sessions: [AppSession] = [
        .init(app: "A", span: span(10, 20)), .init(app: "A", span: span(25, 30)),
        .init(app: "B", span: span(50, 100)), .init(app: "E", span: span(60, 70)),
        .init(app: "C", span: span(90, 100)), .init(app: "I", span: span(95, 100)),
        .init(app: "C", span: span(203, 220)), .init(app: "B", span: span(205, 210)),
        .init(app: "I", span: span(210, 215)), .init(app: "D", span: span(250, 300)),
        .init(app: "D", span: span(402, 410)), .init(app: "F", span: span(450, 500)),
        .init(app: "G", span: span(480, 500)), .init(app: "E", span: span(601, 605)),
        .init(app: "G", span: span(603, 604)), .init(app: "F", span: span(605, 650)),
    ]
    return try UsageTrace(
        name: "hand", start: at(0), end: at(1000), sessions: sessions,
        screenOn: [span(0, 100), span(200, 300), span(400, 500), span(600, 700)])
}

@Suite("Oracle frontier: fewest wake-ups for each fresh share (SPEC §11, SCH-7)")
struct OracleFrontierTests {
    // MARK: The exact maximum coverage

    /// The most of `intervals` that `k` points stab, trying every set of `k` distinct candidate points.
    static func bruteCoverage(_ intervals: [IntervalStabbing.Interval], points k: Int) -> Int {
        let candidates = Array(Set(intervals.flatMap { [$0.start, $0.end] })).sorted()
        var best = 0
        func search(_ from: Int, _ chosen: [Int64]) {
            best = max(best, intervals.count { interval in chosen.contains { interval.contains($0) } })
            guard chosen.count < k else { return }
            for index in from..<candidates.count { search(index + 1, chosen + [candidates[index]]) }
        }
        search(0, [])
        return best
    }

    @Test("k points stab as many intervals as brute force finds, for every k, on 300 seeded random cases; the curve is concave (§11)")
    func coverageAgainstBruteForce() {
        var random = SeededGenerator(seed: 2_026_1125)
        for _ in 0..<300 {
            let count = 1 + random.index(below: 9)
            let intervals = (0..<count).map { _ -> IntervalStabbing.Interval in
                let start = Int64(random.index(below: 30))
                return .init(start: start, end: start + Int64(random.index(below: 8)))
            }
            let stabbing = IntervalStabbing(intervals)
            for k in 0...min(stabbing.minimumPoints + 1, 3) {
                #expect(stabbing.covered(points: k) == Self.bruteCoverage(intervals, points: k), "k = \(k)")
            }
            #expect(stabbing.covered(points: stabbing.minimumPoints) == intervals.count)
            let gains = zip(stabbing.covered.dropFirst(), stabbing.covered).map { $0 - $1 }
            #expect(gains.allSatisfy { $0 > 0 }, "each extra point up to the minimum stabs more")
            #expect(zip(gains, gains.dropFirst()).allSatisfy { $0 >= $1 }, "concave: \(stabbing.covered)")
            for (k, points) in stabbing.optimalPoints {
                #expect(points.count == k)
                #expect(intervals.count { interval in points.contains { interval.contains($0) } } == stabbing.covered[k])
            }
        }
    }

    @Test("Stabbing every window takes the greedy's number of points (the oracle's count)")
    func minimumIsTheGreedy() {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            let intervals = (0..<(1 + random.index(below: 40))).map { _ -> IntervalStabbing.Interval in
                let start = Int64(random.index(below: 1000))
                return .init(start: start, end: start + Int64(random.index(below: 100)))
            }
            var greedy = 0
            var last: Int64?
            for interval in intervals.sorted(by: { $0.end < $1.end }) where last.map({ $0 < interval.start }) ?? true {
                greedy += 1
                last = interval.end
            }
            #expect(IntervalStabbing(intervals).minimumPoints == greedy)
        }
    }

    // MARK: The frontier of a trace

    @Test("A hand-made trace: missed, free and screen-off opens, and the frontier 8, 11, 13, 14 of 16 (§11)")
    func handMade() throws {
        let trace = try frontierHandTrace()
        let frontier = OracleFrontier(trace)
        #expect(frontier.opens == 16)
        #expect(frontier.tooEarly == 1)
        #expect(frontier.reopenedTooSoon == 1)
        #expect(frontier.freeOpens == 8)
        #expect(frontier.reachableOpens == 14)
        #expect(frontier.curve.map(\.freshOpens) == [8, 11, 13, 14])
        #expect(frontier.wakeUps(forFreshOpens: 8) == 0)
        #expect(frontier.wakeUps(forFreshOpens: 12) == 2)
        #expect(frontier.wakeUps(forFreshOpens: 15) == nil, "above the reachable maximum")
        #expect(frontier.freshOpens(wakeUps: 99) == 14)
        let plan = try #require(frontier.plan(wakeUps: 1))
        #expect(plan.wakeUps == [at(192)], "one instant at the earliest end stabs all three windows of [100, 200)")
        // A free refresh ends with the screen on when its window allows: E's last open (window [70, 590]) at 489.
        #expect(plan.refreshes.contains(PlannedRefresh(at: at(489), app: "E")))
    }

    @Test("§11 read literally on the hand-made frontier 8, 11, 13, 14: the most favourable oracle is the one with the most wake-ups whose fresh opens the policy has 90 % of")
    func literalTarget() throws {
        let frontier = OracleFrontier(try frontierHandTrace())
        // 12 fresh: 0.9 × 13 = 11.7 ≤ 12, 0.9 × 14 = 12.6 > 12, so the oracle with 2 wake-ups; 2 ≤ 2.5 but 3 > 2.5.
        #expect(frontier.literalTarget(fresh: 12, wakeUps: 2) == (2, true))
        #expect(frontier.literalTarget(fresh: 12, wakeUps: 3) == (2, false))
        // 13 fresh has 90 % of the last point: the oracle that makes every reachable open fresh, 3 wake-ups.
        #expect(frontier.literalTarget(fresh: 13, wakeUps: 3) == (3, true))
        #expect(frontier.literalTarget(fresh: 13, wakeUps: 4) == (3, false))
        // 7 fresh is less than 90 % of the free opens (7.2): no oracle to compare with.
        #expect(frontier.literalTarget(fresh: 7, wakeUps: 0) == (0, false))
        // 8 fresh (the free opens), 0 wake-ups: within 1.25× of the oracle with 0 (its fresh 8 is also ≤ 8/0.9).
        #expect(frontier.literalTarget(fresh: 8, wakeUps: 0) == (0, true))
        #expect(frontier.literalTarget(fresh: 8, wakeUps: 1) == (0, false))
    }

    @Test("The frontier's plans are metered as predicted: fresh opens by FreshnessMeter, wake-ups by EnergyMeter (cluster rule)")
    func plansMeterAsPredicted() throws {
        let trace = try frontierHandTrace()
        let frontier = OracleFrontier(trace)
        for k in frontier.plannedWakeUps {
            let plan = try #require(frontier.plan(wakeUps: k))
            let fresh = FreshnessMeter().measure(trace, refreshes: plan.refreshSpans)
            let energy = EnergyMeter().measure(DeviceTimeline(trace: trace, runs: plan.runs()))
            #expect(fresh.freshOpens == frontier.freshOpens(wakeUps: k))
            #expect(energy.wakeUps == k)
        }
    }

    @Test("Cluster rule (decision 0045): work started after the lock, while a run begun with the screen on goes on, costs the meter a wake-up as it costs the frontier; the frontier's runs begun with the screen on end before the lock")
    func clusterRule() throws {
        let trace = try frontierHandTrace()
        // C's first open is free (window [0, 79]); placed at 99 its run lasts past the lock at 100, and the three
        // refreshes of the gap [100, 200) started at 100 overlap its cluster, which did not wake the device: one wake-up.
        let carried = [BackgroundRun(app: "C", span: Span(start: at(99), duration: .seconds(10)))]
            + ["B", "C", "I"].map { BackgroundRun(app: $0, span: Span(start: at(100), duration: .seconds(10))) }
        #expect(EnergyMeter().measure(DeviceTimeline(trace: trace, runs: carried)).wakeUps == 1)
        // Two screen-off instants less than d apart are one cluster, one wake-up.
        let close = [at(150), at(159)].map { BackgroundRun(app: "B", span: Span(start: $0, duration: .seconds(10))) }
        #expect(EnergyMeter().measure(DeviceTimeline(trace: trace, runs: close)).wakeUps == 1)
        // The frontier counts a wake-up for the gap, and leaves no run of the screen-on time going at a lock.
        let frontier = OracleFrontier(trace)
        #expect(frontier.freshOpens(wakeUps: 0) == 8)
        let plan = try #require(frontier.plan(wakeUps: 3))
        for refresh in plan.refreshes where trace.isScreenOn(at: refresh.at) {
            let span = try #require(trace.screenOnSpan(at: refresh.at))
            #expect(refresh.at + frontier.refreshDuration <= span.end)
        }
    }

    @Test("On 300 seeded random traces: the frontier equals brute force over sets of windows, its plans meter as predicted, it is monotone and ends at the reachable maximum with the oracle's wake-ups")
    func randomTracesAgainstBruteForce() throws {
        var random = SeededGenerator(seed: 20_261_125)
        var casesWithSeveralGaps = 0
        for _ in 0..<300 {
            let testCase = try OraclePlannerTests.randomCase(&random)
            let trace = testCase.trace
            let duration = testCase.duration
            let frontier = OracleFrontier(trace, refreshDuration: .seconds(duration), slack: .seconds(1))
            // Independent windows on the grid of whole seconds: allowed starts after the app's previous session,
            // d + 1 s before the open.
            var free = 0
            var missed = 0
            var screenOff: [[Int]] = []
            for app in trace.apps {
                let own = trace.sessions(of: app)
                for (index, session) in own.enumerated() {
                    let open = Int((session.start - at(0)).inSeconds.rounded())
                    let low = index > 0 ? Int((own[index - 1].end - at(0)).inSeconds.rounded()) : 0
                    let high = open - duration - 1
                    let allowed = low > high ? [] : Array(low...high)
                    if allowed.isEmpty {
                        missed += 1
                    } else if allowed.contains(where: { trace.isScreenOn(at: at(Double($0))) }) {
                        free += 1
                    } else {
                        screenOff.append(allowed)
                    }
                }
            }
            #expect(frontier.missedWindows == missed)
            #expect(frontier.freeOpens == free)
            // Brute force: the most windows a set needing at most k instants holds (the fewest instants for a set is
            // OraclePlannerTests' brute-force minimum).
            var bestForPoints = [Int](repeating: 0, count: screenOff.count + 1)
            for mask in 0..<(1 << screenOff.count) {
                let chosen = screenOff.indices.filter { mask & (1 << $0) != 0 }.map { screenOff[$0] }
                let needed = OraclePlannerTests.bruteForceMinimum(chosen)
                bestForPoints[needed] = max(bestForPoints[needed], chosen.count)
            }
            for k in 0...screenOff.count {
                let brute = bestForPoints[0...k].max()!
                #expect(frontier.freshOpens(wakeUps: k) == free + brute, "k = \(k)")
            }
            let curve = frontier.curve.map(\.freshOpens)
            #expect(zip(curve, curve.dropFirst()).allSatisfy { $0 < $1 }, "monotone")
            #expect(curve.last == frontier.reachableOpens)
            let oracle = OraclePlanner(refreshDuration: .seconds(duration + 1), horizon: trace.duration).plan(trace)
            #expect(frontier.wakeUpsForAllReachable == oracle.wakeUps.count)
            if frontier.wakeUpsForAllReachable > 1 { casesWithSeveralGaps += 1 }
            for k in frontier.plannedWakeUps {
                let plan = try #require(frontier.plan(wakeUps: k))
                let fresh = FreshnessMeter().measure(trace, refreshes: plan.refreshSpans)
                let energy = EnergyMeter().measure(DeviceTimeline(trace: trace, runs: plan.runs()))
                #expect(fresh.freshOpens == frontier.freshOpens(wakeUps: k))
                #expect(energy.wakeUps == k, "k = \(k)")
            }
        }
        #expect(casesWithSeveralGaps > 15)
    }

    @Test("On the real trace the frontier ends where the oracle does: its wake-ups, its free and missed opens, 88 % reachable (§11)")
    func realTrace() throws {
        let trace = try UsageLoggerTrace.load(appEvents: TestSupport.appEvents, deviceEvents: TestSupport.deviceEvents)
        let frontier = OracleFrontier(trace)
        let oracle = OraclePlanner(refreshDuration: .seconds(11), horizon: trace.duration).plan(trace)
        #expect(frontier.wakeUpsForAllReachable == oracle.wakeUps.count)
        #expect(frontier.freeOpens == oracle.freeRefreshes)
        #expect(frontier.missedWindows == oracle.missedWindows)
        #expect(abs(frontier.reachableShare - 0.88) < 0.01, "\(frontier.reachableShare)")
        let curve = frontier.curve.map(\.freshOpens)
        #expect(zip(curve, curve.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test("A frontier plan replayed through the real core as a PlannedPolicy meters the predicted fresh opens and wake-ups (SCH-7)")
    func replayMatchesPrediction() throws {
        let trace = try frontierHandTrace()
        let frontier = OracleFrontier(trace)
        var options = TraceReplay.Options()
        options.battery = nil
        let evaluation = PolicyEvaluation(options: options)
        for k in [1, 3] {
            let plan = try #require(frontier.plan(wakeUps: k))
            let result = evaluation.evaluate(plan: plan, name: "frontier", knob: "k \(k)", on: trace)
            #expect(result.freshness.freshOpens == frontier.freshOpens(wakeUps: k), "k = \(k)")
            #expect(result.energy.wakeUps == k, "k = \(k)")
        }
    }

    // MARK: Definitions a reader can check

    @Test("The CSV tables read back to the same trace and the same frontier")
    func csvRoundTrip() throws {
        var light = SyntheticTraceGenerator.Parameters.light
        light.days = 2
        for trace in [try frontierHandTrace(), SyntheticTraceGenerator(light).generate(seed: 4)] {
            let back = try TraceCSV.read(
                name: trace.name, start: trace.start, end: trace.end, sessions: TraceCSV.sessions(trace),
                screen: TraceCSV.screen(trace))
            #expect(back.sessions == trace.sessions)
            #expect(back.screenOn == trace.screenOn)
            #expect(OracleFrontier(back).curve.map(\.freshOpens) == OracleFrontier(trace).curve.map(\.freshOpens))
            let table = CSVTable(parsing: TraceCSV.frontier(OracleFrontier(trace)))
            #expect(table.header == ["wake_ups", "fresh_opens", "fresh_share"])
            #expect(table.rows.count == OracleFrontier(trace).wakeUpsForAllReachable + 1)
        }
        #expect(TraceCSV.sessions(try UsageTrace(
            name: "q", start: at(0), end: at(10), sessions: [.init(app: "a,\"b\"", span: span(1, 2))],
            screenOn: [span(0, 5)])).contains("\"a,\"\"b\"\"\",1000000000,2000000000"))
        #expect(throws: TraceCSV.ReadError.self) {
            try TraceCSV.read(name: "x", start: at(0), end: at(10), sessions: "app,open_ns,close_ns\na,5,1\n", screen: "on_ns,off_ns\n")
        }
    }
}

@Suite("Resume ceiling: what betting on the app left in front can give (SCH-7)")
struct ResumeCeilingTests {
    @Test("On a hand-made trace: each app's locks and resumes, and the fewest wake-ups a whole-app rule needs")
    func handMade() throws {
        // Screen on [0,100) [200,300) [400,500) [600,700) [800,900); A in front at locks 100 and 300, B at 500 and 700.
        // After 100 the user comes straight back to A (203); after 300 opens C, after 500 comes back to B (602), after
        // 700 opens A (not the app left in front; its window holds screen-on time, so it is free).
        let sessions: [AppSession] = [
            .init(app: "A", span: span(10, 100)), .init(app: "A", span: span(203, 300)),
            .init(app: "C", span: span(250, 260)), .init(app: "C", span: span(402, 420)),
            .init(app: "B", span: span(430, 500)), .init(app: "B", span: span(602, 700)),
            .init(app: "A", span: span(802, 850)),
        ]
        let trace = try UsageTrace(
            name: "ceiling", start: at(0), end: at(1000), sessions: sessions,
            screenOn: [span(0, 100), span(200, 300), span(400, 500), span(600, 700), span(800, 900)])
        let frontier = OracleFrontier(trace)
        let ceiling = ResumeCeiling(trace, frontier: frontier)
        // A: locks 100 and 300 (its session 203–300 ends the span), resumed at 203: 1 of 2. B: 500, 700; resumed at 602.
        // The last lock (900) has A in front but nothing after it: still a lock.
        #expect(ceiling.rates.map(\.app) == ["B", "A"])
        #expect(ceiling.rates.map(\.locks) == [2, 3])
        #expect(ceiling.rates.map(\.resumes) == [1, 1])
        #expect(ceiling.resumes == frontier.screenOffWindows.count)
        #expect(ceiling.wakeUps(forResumes: 0) == 0)
        #expect(ceiling.wakeUps(forResumes: 1) == 2, "B's two locks")
        #expect(ceiling.wakeUps(forResumes: 2) == 5, "then A's three")
        #expect(ceiling.wakeUps(forResumes: 3) == nil)
    }
}
