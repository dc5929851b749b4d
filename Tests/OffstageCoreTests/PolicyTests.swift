import OffstageCore
import OffstageSimulator
import Testing

/// A refreshing app's behaviour: each run takes 5 s, finds `results` in turn, and resubmits at once.
private func refreshing(_ results: [TaskResult] = [.newData]) -> AppBehavior {
    var tasks = TaskBehavior()
    tasks.runtime = .seconds(5)
    tasks.results = results
    tasks.resubmitAfter = .zero
    return AppBehavior().with(\.tasks, tasks)
}

extension Simulation {
    /// The user picks the device up, opens `id` for `minutes`, goes home and puts it down (so the next unlock does
    /// not return to the app: that would count as another open).
    mutating func use(_ id: AppID, minutes: Double = 3) throws {
        unlock()
        try openAndSettle(id)
        run(for: .seconds(double: minutes * 60))
        home()
        lock()
    }

    /// Runs until the next day's `hour`:`minute` (local time, UTC here).
    mutating func runUntil(hour: Int, minute: Int = 0) {
        let clock = LocalClock()
        var day = clock.day(now)
        var target = clock.startOfDay(day) + .seconds(double: Double(hour * 3600 + minute * 60))
        if target <= now {
            day += 1
            target = clock.startOfDay(day) + .seconds(double: Double(hour * 3600 + minute * 60))
        }
        run(until: target)
    }

    func wakeUps(since start: Instant) -> [LogEntry] { log.filter { $0.kind == .wakeup && $0.at >= start } }
}

@Suite("The adaptive policy (SPEC SCH-5, SCH-7)")
struct PolicyTests {
    @Test("SCH-5: refreshes are placed shortly before the time the user usually opens the app, so the open is fresh")
    func beforeTheUsualOpen() throws {
        var sim = Simulation()
        sim.lock()
        sim.install(schedulingManifest(newsApp), behavior: refreshing(), pending: [refreshSubmission])
        for _ in 0..<6 {
            sim.runUntil(hour: 8)
            try sim.use(newsApp)
        }
        let clock = LocalClock()
        // Each of the last three mornings: one refresh between 07:40 and 08:00, while the device slept.
        for daysAgo in 0..<3 {
            let day = clock.day(sim.now) - Int64(daysAgo)
            let window = (clock.startOfDay(day) + .seconds(7 * 3600 + 40 * 60))..<(clock.startOfDay(day) + .seconds(8 * 3600))
            let early = sim.runTimes(of: newsApp).filter { window.contains($0) }
            #expect(early.count == 1, "day -\(daysAgo): runs \(sim.runTimes(of: newsApp).map(\.clockTime))")
        }
        let morningRuns = sim.log.filter { $0.kind == .taskRun && LocalClock().hourOfDay($0.at) == 7 }.suffix(3)
        #expect(morningRuns.count == 3 && morningRuns.allSatisfy { $0.message.contains("usually opens it") }, "\(morningRuns.map(\.message))")
    }

    @Test("SCH-5: an app whose refreshes find no new data wakes the device less often than one that finds new data")
    func backOffWithoutNewData() throws {
        func wakeUps(_ results: [TaskResult]) throws -> Int {
            var sim = Simulation()
            sim.lock()
            sim.install(schedulingManifest(newsApp), behavior: refreshing(results), pending: [refreshSubmission])
            // The user checks the app every two hours and locks the screen on it: it is the one app the device
            // might wake for (SCH-5: that wake-up comes back to it after unlocking).
            for _ in 0..<36 {
                sim.unlock(returningToApp: false)
                try sim.openAndSettle(newsApp)
                sim.run(for: .seconds(60))
                sim.lock()
                sim.run(for: .seconds(2 * 3600 - 60))
            }
            return sim.wakeUps(since: .init(nanosecondsSinceEpoch: 0)).count
        }
        let productive = try wakeUps([.newData])
        let unproductive = try wakeUps([.noData])
        #expect(productive >= 20, "woken after most locks: \(productive)")
        #expect(unproductive * 2 <= productive, "no data: \(unproductive) wake-ups, new data: \(productive)")
    }

    @Test("SCH-5: an app the user has stopped opening is soon not refreshed at all")
    func dormantAppsAreLeftAlone() throws {
        var sim = Simulation()
        sim.lock()
        sim.install(schedulingManifest(newsApp), behavior: refreshing(), pending: [refreshSubmission])
        try sim.use(newsApp)
        let start = sim.now
        sim.run(for: .seconds(12 * 86_400))
        let late = sim.runTimes(of: newsApp).filter { $0 > start + .seconds(5 * 86_400) }
        #expect(late.count <= 2, "refreshed \(late.count) times in the last week of not being opened")
    }

    @Test("SCH-7: apps the user opens around the same time share one wake-up a day")
    func sharedWakeUps() throws {
        let ids: [AppID] = (0..<5).map { AppID("com.example.app\($0)") }
        var sim = Simulation()
        sim.lock()
        for id in ids { sim.install(schedulingManifest(id), behavior: refreshing(), pending: [refreshSubmission]) }
        for _ in 0..<5 {
            sim.runUntil(hour: 7)
            for id in ids { try sim.use(id, minutes: 8) }
        }
        let lastDay = sim.now - .seconds(86_400)
        let wakeUps = sim.wakeUps(since: lastDay)
        let runs = ids.map { sim.runTimes(of: $0).filter { $0 >= lastDay }.count }.reduce(0, +)
        #expect(runs >= 5, "each app refreshed before its open")
        #expect(wakeUps.count == 1, "one shared wake-up: \(wakeUps.map { "\($0.at.clockTime) \($0.message)" })")
    }

    @Test("SCH-7: work done while the screen is on costs no wake-up")
    func awakeWorkIsFree() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(newsApp), behavior: refreshing(), pending: [refreshSubmission])
        for _ in 0..<20 {
            try sim.openAndSettle(newsApp)
            sim.run(for: .seconds(60))
            sim.home()
            sim.run(for: .seconds(600))
        }
        #expect(sim.runTimes(of: newsApp).count >= 10)
        #expect(sim.wakeUps(since: .init(nanosecondsSinceEpoch: 0)).isEmpty)
    }

    @Test("SCH-7, decision 0045: work begun with the screen on and still running at the lock does not make the device awake: the app left in front is not refreshed on its back, as if it were free")
    func screenOnWorkDoesNotKeepTheDeviceAwake() throws {
        let other: AppID = "com.example.other"
        var sim = Simulation()
        sim.install(schedulingManifest(newsApp), behavior: refreshing(), pending: [refreshSubmission])
        sim.install(schedulingManifest(other), behavior: refreshing(), pending: [refreshSubmission])
        sim.run(for: .seconds(30))  // both refreshed once: clean
        try sim.openAndSettle(other)
        sim.run(for: .seconds(60))
        sim.home()  // the other app's refresh starts with the screen on and runs 5 s
        try sim.openAndSettle(newsApp)
        sim.run(for: .seconds(2))
        let lock = sim.now
        sim.lock()  // the news app was in front: it is the one dirty app now
        sim.run(for: .seconds(5))
        #expect(sim.runTimes(of: other).contains { $0 < lock }, "the other app's refresh was running at the lock")
        let early = sim.runTimes(of: newsApp).filter { $0 >= lock && $0 < lock + .seconds(5) }
        #expect(early.isEmpty, "not refreshed while only screen-on work runs: \(early.map(\.clockTime))")
        #expect(!sim.log.contains { $0.app == newsApp && $0.message.contains("the device is awake") && $0.at >= lock })
    }

    @Test("SCH-5, decision 0046: a refresh that completes while the user is back in the app does not count for the next open: the app is refreshed again when they leave it")
    func refreshCompletedDuringUseLeavesTheAppDirty() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(newsApp), behavior: refreshing(), pending: [refreshSubmission])
        sim.run(for: .seconds(30))  // refreshed once: clean
        try sim.openAndSettle(newsApp)
        sim.run(for: .seconds(60))
        sim.home()  // dirty and awake: its 5 s refresh starts now
        let left = sim.now
        sim.run(for: .seconds(2))
        try sim.openAndSettle(newsApp)  // back before it completes: it completes while the user reads
        sim.run(for: .seconds(60))
        let results = try #require(sim.core.apps[newsApp]?.durable.schedule.results)
        #expect(results.lastRefreshStartedAt == left, "the refresh started as the user left")
        #expect((results.lastRefreshAt ?? left) > left + .seconds(2), "and completed after they came back")
        sim.home()
        let second = sim.now
        sim.run(for: .seconds(10))
        #expect(sim.runTimes(of: newsApp).contains { $0 >= second }, "refreshed again as the user leaves")
    }

    @Test("A device with nothing pending has nothing due: no timer, no wake-up")
    func nothingDue() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(newsApp))
        try sim.use(newsApp)
        sim.run(for: .seconds(10))
        #expect(sim.core.nextDeadline == nil)
    }
}

@Suite("The baseline policies")
struct BaselinePolicyTests {
    @Test("Fixed interval: each app runs every 15 minutes from its install, screen on or off")
    func fixedInterval() throws {
        var sim = Simulation(policy: FixedIntervalPolicy(interval: 900))
        sim.lock()
        sim.install(schedulingManifest(newsApp), behavior: refreshing(), pending: [refreshSubmission])
        let installed = sim.now
        sim.run(for: .seconds(3_600 + 60))
        let offsets = sim.runTimes(of: newsApp).map { ((($0 - installed).inSeconds) / 60).rounded() }
        #expect(offsets == [15, 30, 45, 60])
    }

    @Test("Android-like: every 15 min while active; in Doze, only in maintenance windows, at the bucket's period")
    func androidDoze() throws {
        var sim = Simulation(policy: AndroidStandbyPolicy())
        try sim.setConditions(ConditionOverrides(charging: false))
        sim.install(schedulingManifest(newsApp), behavior: refreshing(), pending: [refreshSubmission])
        try sim.use(newsApp, minutes: 1)
        let locked = sim.now
        sim.run(for: .seconds(5 * 3_600))
        let offsets = sim.runTimes(of: newsApp).map { (($0 - locked).inSeconds / 60).rounded() }
        // 15 and 30 min after install (the use took the first minute) in the active bucket; Doze from 30 min after
        // the lock; by the first window (90 min) the app has been unused over an hour — working set, 2 h period,
        // due at 149 min — so it runs in the next window, at 210 min.
        #expect(offsets == [14, 29, 210], "\(offsets)")
    }
}
