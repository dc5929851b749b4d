import OffstageCore
import OffstageSimulator
import Testing

@Suite("Running scheduled work (SPEC SCH-3, SCH-4, SCH-9)")
struct TaskRunTests {
    @Test("SCH-3, LC-2: a not-running app is launched into the background for its task: did-finish-launching(refresh), the handler, no did-become-active; suspended after it completes")
    func launchIntoBackground() throws {
        var sim = Simulation()
        sim.lock()  // asleep: the policy plans the request hours away, so only the forced run runs it
        sim.install(
            schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks.runtime, .seconds(3)),
            pending: [refreshSubmission])
        let start = sim.now
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(10))
        #expect(sim.trace(of: refreshApp).first?.event == .launched(.refresh))
        #expect(sim.callbacks(of: refreshApp) == ["didFinishLaunching", "runTask"])
        let completed = try #require(sim.trace.first { $0.event == .taskCompleted(refreshID, .newData) }?.at)
        let frozen = try #require(sim.firstTime(of: .frozen, for: refreshApp))
        #expect(approximately((completed - start).inSeconds, 3, within: 0.1))
        #expect(approximately((frozen - completed).inSeconds, 1, within: 0.01), "suspended 1 s after the task completed")
        #expect(sim.logLines(of: refreshApp, .taskRun).first?.contains("forced") == true, "SCH-9: marked forced")
    }

    @Test("SCH-3, §11: completing a run that has ended is harmless; a number never handed to the app is NoSuchTask")
    func completingRunsThatAreNotRunning() throws {
        var sim = Simulation()
        sim.lock()
        sim.install(
            schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks.runtime, .seconds(3)),
            pending: [refreshSubmission])
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(1))
        let pid = try #require(sim.status(of: refreshApp)?.pid)
        let run = try #require(sim.core.apps[refreshApp]?.process?.runs.first?.id)
        sim.run(for: .seconds(3))
        #expect(sim.core.apps[refreshApp]?.process?.runs.isEmpty == true, "the app completed it")
        try sim.input { core, now in try core.completeTask(refreshApp, pid: pid, run: run, result: .failed, at: now) }
        #expect(sim.logLines(of: refreshApp, .warning).last == "completion of finished task run \(run) ignored")
        for made in [run + 1_000, 0, UInt64.max] {
            let refused = #expect(throws: CoreError.self) {
                try sim.input { core, now in try core.completeTask(refreshApp, pid: pid, run: made, result: .newData, at: now) }
            }
            #expect(refused?.code == .noSuchTask && refused?.message == "'\(refreshApp)' has no task run \(made)")
        }
    }

    @Test("SCH-3: a suspended app is thawed for its task, runs the handler and is suspended again")
    func resumeSuspended() throws {
        var sim = try suspendedSchedulingApp(tasks: { var t = TaskBehavior(); t.runtime = .seconds(2); return t }())
        // No network: the policy holds the request, so only the forced run (which ignores conditions) runs it.
        try sim.setConditions(ConditionOverrides(network: NetworkKind.none))
        try sim.openAndSettle(refreshApp)
        sim.submit(refreshApp, refreshSubmission)
        sim.home()
        sim.run(for: .seconds(2))
        let start = sim.now
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(5))
        #expect(sim.events(of: refreshApp, since: start) == [
            .thawed, .callback("runTask"), .taskCompleted(refreshID, .newData), .frozen,
        ])
        #expect(sim.state(of: refreshApp) == .suspended)
    }

    @Test("SCH-3: past its runtime (30 s) the expiration handler runs; an app that still does not complete is terminated after the grace period with the reason recorded")
    func expirationThenOverrun() throws {
        var tasks = TaskBehavior()
        tasks.runtime = nil  // never completes
        tasks.completesOnExpiration = false
        var sim = Simulation()
        sim.lock()  // asleep: the policy plans the request hours away, so only the forced run runs it
        sim.install(schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks, tasks), pending: [refreshSubmission])
        let start = sim.now
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(40))
        let expired = try #require(sim.trace.first { $0.event == .callback("taskExpiring") }?.at)
        #expect(approximately((expired - start).inSeconds, 30, within: 0.1))
        let killed = try #require(sim.firstTime(of: .sigterm, for: refreshApp))
        #expect(approximately((killed - start).inSeconds, 35, within: 0.1), "terminated 5 s (the grace) after expiration")
        let reason = sim.core.apps[refreshApp]?.durable.lastTermination?.reason
        #expect(reason == .taskOverrun(identifier: refreshID, seconds: 35))
        #expect(sim.logLines(of: refreshApp, .watchdog).contains { $0.contains("task '\(refreshID)' not completed") })
        // The request was cut off, not lost: it is pending again.
        #expect(sim.core.apps[refreshApp]?.durable.schedule.requests[refreshID] != nil)
    }

    @Test("SCH-9: expire-task calls the running task's expiration handler now; the app completes it as failed")
    func expireNow() throws {
        var tasks = TaskBehavior()
        tasks.runtime = .seconds(20)
        var sim = Simulation()
        sim.lock()  // asleep: the policy plans the request hours away, so only the forced run runs it
        sim.install(schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks, tasks), pending: [refreshSubmission])
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(1))
        try sim.expireTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(3))
        #expect(sim.callbacks(of: refreshApp).contains("taskExpiring"))
        #expect(sim.trace.contains { $0.event == .taskCompleted(refreshID, .failed) })
        #expect(sim.state(of: refreshApp) == .suspended)
        let again = #expect(throws: CoreError.self) { try sim.expireTaskNow(refreshApp, refreshID) }
        #expect(again?.code == .noSuchTask)
    }

    @Test("SCH-9: run-task of a request that is not pending is refused with the fix; of one already running too")
    func runNowErrors() throws {
        var tasks = TaskBehavior()
        tasks.runtime = .seconds(10)
        var sim = Simulation()
        sim.lock()  // asleep: the policy plans the request hours away, so only the forced run runs it
        sim.install(schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks, tasks), pending: [refreshSubmission])
        let missing = #expect(throws: CoreError.self) { try sim.runTaskNow(refreshApp, "com.example.nothing") }
        #expect(missing?.code == .noSuchTask)
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(1))
        let running = #expect(throws: CoreError.self) { try sim.runTaskNow(refreshApp, refreshID) }
        #expect(running?.code == .alreadyRunning)
        #expect(running?.fix.contains("expire-task") == true)
        let fetch = #expect(throws: CoreError.self) { try sim.fetchNow("com.example.none") }
        #expect(fetch?.code == .appNotInstalled)
    }

    @Test("SCH-4, SCH-9: the simulated background fetch launches the app with reason fetch and calls perform-fetch")
    func fetchNow() throws {
        var tasks = TaskBehavior()
        tasks.results = [.noData]
        var sim = Simulation()
        sim.install(schedulingManifest(newsApp, modes: [.fetch]), behavior: AppBehavior().with(\.tasks, tasks))
        try sim.fetchNow(newsApp)
        sim.run(for: .seconds(5))
        #expect(sim.trace(of: newsApp).first?.event == .launched(.fetch))
        #expect(sim.callbacks(of: newsApp) == ["didFinishLaunching", "performFetch"])
        #expect(sim.core.apps[newsApp]?.durable.schedule.results.last == .noData)
        #expect(sim.state(of: newsApp) == .suspended)
    }

    @Test("SCH-4: with the interval 'never' (the default) the app is never fetched, and explain says why")
    func fetchNeverByDefault() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(newsApp, modes: [.fetch]))
        sim.run(for: .seconds(3 * 86_400))
        #expect(sim.runTimes(of: newsApp).isEmpty)
        let status = try #require(try sim.explain(newsApp, TaskRequest.fetchIdentifier).first)
        #expect(status.holds == [.fetchIntervalNever])
        #expect(status.summary.contains("setMinimumBackgroundFetchInterval"))
        #expect(sim.core.nextDeadline == nil, "nothing due: no wake-up at all")
    }

    @Test("SCH-4: with an interval, the app is fetched between the user's opens, never more often than the interval")
    func fetchInterval() throws {
        var tasks = TaskBehavior()
        tasks.fetchIntervalOnLaunch = .seconds(3_600)
        var sim = Simulation()
        sim.install(schedulingManifest(newsApp, modes: [.fetch]), behavior: AppBehavior().with(\.tasks, tasks))
        // The user checks the news every 40 minutes for a day, with the screen off in between.
        for _ in 0..<36 {
            sim.unlock()
            try sim.openAndSettle(newsApp)
            sim.run(for: .seconds(30))
            sim.lock()
            sim.run(for: .seconds(40 * 60 - 30))
        }
        let times = sim.runTimes(of: newsApp)
        #expect(times.count >= 10, "fetched \(times.count) times")
        for (a, b) in zip(times, times.dropFirst()) { #expect((b - a).inSeconds >= 3_600) }
    }

    @Test("LC-5, SCH-3: a process that dies during a run leaves the request pending, recorded as failed")
    func crashDuringRun() throws {
        var sim = Simulation()
        sim.lock()
        sim.install(
            schedulingManifest(refreshApp),
            behavior: AppBehavior().on("runTask", .exit(code: 3, after: .seconds(1))).with(\.tasks.runtime, .seconds(5)),
            pending: [refreshSubmission])
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(3))
        #expect(sim.state(of: refreshApp) == .notRunning)
        let schedule = try #require(sim.core.apps[refreshApp]?.durable.schedule)
        #expect(schedule.requests[refreshID] != nil)
        #expect(schedule.results.last == .failed)
        #expect(sim.logLines(of: refreshApp, .taskDone).last?.contains("cut off") == true)
    }
}

@Suite("Shutdown and scheduled work")
struct ShutdownSchedulingTests {
    @Test("Once shutdown begins, nothing is launched or started, even work that is due")
    func noRunsDuringShutdown() throws {
        var sim = Simulation()
        sim.lock()
        sim.install(schedulingManifest(refreshApp), pending: [refreshSubmission])
        sim.unlock()
        try sim.openAndSettle(refreshApp)
        sim.home()  // dirty and the device awake: its refresh is due right now
        sim.shutdown()
        let stopped = sim.now
        sim.run(for: .seconds(3_600))
        #expect(!sim.trace(of: refreshApp).contains {
            guard $0.at >= stopped else { return false }
            if case .launched = $0.event { return true }
            return $0.event == .callback("runTask")
        })
        #expect(sim.core.nextDeadline == nil)
        #expect(throws: CoreError.self) { try sim.runTaskNow(refreshApp, refreshID) }
    }
}

@Suite("Processing and back-off")
struct ProcessingBackOffTests {
    @Test("SCH-5: a processing task that failed (expired) and was resubmitted is not run again at once, but after the back-off")
    func failedProcessingBacksOff() throws {
        var tasks = TaskBehavior()
        tasks.runtime = nil  // works until it expires, then completes as failed
        tasks.resubmitAfter = .zero
        var sim = Simulation()
        try sim.setConditions(ConditionOverrides(charging: true, idle: true))
        sim.install(
            schedulingManifest(processingApp), behavior: AppBehavior().with(\.tasks, tasks),
            pending: [.init(processingID, kind: .processing)])
        sim.run(for: .seconds(3_600))
        let runs = sim.runTimes(of: processingApp)
        #expect(runs.count == 2, "\(runs.map(\.clockTime))")
        if runs.count >= 2 { #expect(approximately((runs[1] - runs[0]).inSeconds, 1_800, within: 0.1), "30 min back-off after the first failure") }
        #expect(sim.state(of: processingApp) == .suspended)
    }
}
