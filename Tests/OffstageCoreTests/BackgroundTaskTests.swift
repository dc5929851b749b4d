import OffstageCore
import OffstageSimulator
import Testing

@Suite("Finite-length background tasks (SPEC BT)")
struct BackgroundTaskTests {
    @Test("BT-1, BT-2 (S1): a task keeps the app running in the background; suspended 1 s after it ends")
    func finishingWorkAfterLeaving() throws {
        let behavior = AppBehavior().on("didEnterBackground", .beginTask(name: "save", endAfter: .seconds(8)))
        var sim = makeSimulation(a: behavior)
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        sim.run(for: .seconds(7))
        #expect(sim.state(of: appA) == .background)
        sim.run(for: .seconds(5))
        #expect(
            sim.events(of: appA, since: start) == [
                .callback("willResignActive"), .callback("didEnterBackground"),
                .taskBegan("save", BackgroundTaskID(taskID(sim))),
                .taskEnded("save"), .frozen,
            ])
        #expect(approximately(sim.seconds(from: start, to: .taskEnded("save"), of: appA), 8.002, within: 0.01))
        #expect(approximately(sim.seconds(from: start, to: .frozen, of: appA), 9.002, within: 0.01))
    }

    @Test("BT-3, BT-4 (S2): remaining time falls from 30; expiration at 25 s, once; suspended at 26 s; not killed")
    func runningUntilTimeIsUp() throws {
        let behavior = AppBehavior().on("didEnterBackground", .beginTask(name: "fib", endAfter: nil))
        var sim = makeSimulation(a: behavior)
        try sim.openAndSettle(appA)
        #expect(sim.status(of: appA)?.backgroundTimeRemaining == nil)
        let pid = try #require(sim.status(of: appA)?.pid)
        #expect(try sim.core.backgroundTimeRemaining(appA, pid: pid, at: sim.now) == .greatestFiniteMagnitude)
        let start = sim.now
        sim.home()
        var samples: [Double] = []
        for _ in 0..<5 {
            sim.run(for: .seconds(1))
            samples.append(try sim.core.backgroundTimeRemaining(appA, pid: pid, at: sim.now))
        }
        #expect(zip(samples, [29.0, 28, 27, 26, 25]).allSatisfy { abs($0 - $1) < 0.01 })
        sim.run(for: .seconds(40))
        let expirations = sim.trace(of: appA).filter { $0.event == .callback("backgroundTasksExpiring") }
        #expect(expirations.count == 1)
        #expect(approximately(expirations.first.map { ($0.at - start).inSeconds }, 25, within: 0.001))
        #expect(approximately(sim.seconds(from: start, to: .frozen, of: appA), 26, within: 0.01))
        #expect(!sim.trace(of: appA).contains { $0.event == .sigterm || $0.event == .sigkill })
        let reopen = sim.now
        try sim.openAndSettle(appA)
        #expect(sim.events(of: appA, since: reopen) == [.thawed, .callback("willEnterForeground"), .callback("didBecomeActive")])
    }

    @Test("BT-4: tasks still open when the budget ends get the app terminated, naming the task and how long")
    func overrunTerminates() throws {
        let behavior = AppBehavior()
            .on("didEnterBackground", .beginTask(name: "never-ends", endAfter: nil))
            .with(\.endsTasksOnExpiration, false)
        var sim = makeSimulation(a: behavior)
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        sim.run(for: .seconds(40))
        #expect(approximately(sim.seconds(from: start, to: .callback("backgroundTasksExpiring"), of: appA), 25, within: 0.001))
        #expect(approximately(sim.seconds(from: start, to: .sigterm, of: appA), 30, within: 0.001))
        guard case .backgroundTaskOverrun(let tasks, let seconds) = sim.core.apps[appA]?.durable.lastTermination?.reason
        else {
            Issue.record("no overrun recorded")
            return
        }
        #expect(tasks == ["never-ends"])
        #expect(approximately(seconds, 30, within: 0.01))
        #expect(sim.logLines(of: appA, .watchdog).contains { $0.contains("'never-ends' still open after 30 s") })
    }

    @Test("BT-5 (S3): returning to the foreground lifts the deadline; no expiration, no termination")
    func comingBackWhileTaskOpen() throws {
        let behavior = AppBehavior()
            .on("didEnterBackground", .beginTask(name: "fib", endAfter: nil))
            .with(\.endsTasksOnWillEnterForeground, true)
        var sim = makeSimulation(a: behavior)
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        sim.run(for: .seconds(10))
        try sim.openAndSettle(appA)
        sim.run(for: .seconds(60))
        let events = sim.events(of: appA, since: start)
        #expect(!events.contains(.callback("backgroundTasksExpiring")))
        #expect(!events.contains(.sigterm) && !events.contains(.sigkill))
        #expect(events.suffix(3) == [.callback("willEnterForeground"), .taskEnded("fib"), .callback("didBecomeActive")])
        let pid = try #require(sim.status(of: appA)?.pid)
        #expect(try sim.core.backgroundTimeRemaining(appA, pid: pid, at: sim.now) == .greatestFiniteMagnitude)
    }

    @Test("BT-5: a task begun in the foreground survives into the background and keeps the app running")
    func foregroundTaskSurvives() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let task = sim.beginBackgroundTask(appA, name: "upload")
        #expect(task.isValid)
        sim.home()
        sim.run(for: .seconds(10))
        #expect(sim.state(of: appA) == .background)
        #expect(sim.status(of: appA)?.backgroundTasks == 1)
    }

    @Test("BT-5: a task begun after the budget is spent returns invalid")
    func taskAfterBudgetIsInvalid() throws {
        var core = OffstageCore()
        var now = Instant(secondsSinceEpoch: 100)
        _ = try core.install(InstalledApp(manifest: manifest(appA), bundlePath: "/x", installedAt: now), at: now)
        _ = try core.attached(appA, pid: 9, report: .fresh, at: now)
        _ = core.home(at: now)
        now = now + .seconds(31)
        let (task, _) = try core.beginBackgroundTask(appA, pid: 9, name: "late", at: now)
        #expect(task == .invalid)
    }

    @Test("BT-3: a fresh budget starts each time the app enters the background")
    func freshBudgetEachTime() throws {
        let behavior = AppBehavior().on("didEnterBackground", .beginTask(name: "t", endAfter: .seconds(20)))
        var sim = makeSimulation(a: behavior)
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(22))
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(1))
        let pid = try #require(sim.status(of: appA)?.pid)
        #expect(approximately(try sim.core.backgroundTimeRemaining(appA, pid: pid, at: sim.now), 29, within: 0.01))
    }

    @Test("BT-1: identifiers are unique; ending an unknown or already ended task is harmless and logged")
    func endingUnknownTaskIsHarmless() throws {
        var core = OffstageCore()
        let now = Instant(secondsSinceEpoch: 100)
        _ = try core.install(InstalledApp(manifest: manifest(appA), bundlePath: "/x", installedAt: now), at: now)
        _ = try core.install(InstalledApp(manifest: manifest(appB), bundlePath: "/y", installedAt: now), at: now)
        _ = try core.attached(appA, pid: 10, report: .fresh, at: now)
        _ = try core.attached(appB, pid: 11, report: .fresh, at: now)
        let (t1, _) = try core.beginBackgroundTask(appA, pid: 10, name: "one", at: now)
        let (t2, _) = try core.beginBackgroundTask(appA, pid: 10, name: "two", at: now)
        #expect(t1 != t2 && t1.isValid && t2.isValid)
        // Another app cannot end A's task: it is looked up among B's own tasks only.
        let (endedByOther, otherActions) = try core.endBackgroundTask(appB, pid: 11, task: t1, at: now)
        #expect(!endedByOther)
        #expect(otherActions.contains { if case .log(let entry) = $0 { entry.kind == .warning } else { false } })
        #expect(core.status(of: appA, at: now)?.backgroundTasks == 2)
        #expect(try core.endBackgroundTask(appA, pid: 10, task: t1, at: now).0)
        #expect(try core.endBackgroundTask(appA, pid: 10, task: t1, at: now).0 == false)
        #expect(try core.endBackgroundTask(appA, pid: 10, task: .invalid, at: now).0 == false)
        // A pid that is not the app's process cannot act for it.
        #expect(throws: CoreError.self) { try core.beginBackgroundTask(appA, pid: 11, name: "spoof", at: now) }
    }
}

func taskID(_ sim: Simulation) -> UInt64 {
    for record in sim.trace { if case .taskBegan(_, let id) = record.event { return id.rawValue } }
    return 0
}

