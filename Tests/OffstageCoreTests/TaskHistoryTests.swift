import OffstageCore
import OffstageSimulator
import Testing

/// The history half of explain (SPEC SCH-8): how long each reason held a request back, exactly on virtual time, and
/// how each run ended, as a typed outcome.
@Suite("Explain history (SPEC SCH-8)")
struct TaskHistoryTests {
    /// A processing request that needs a network and a charger, with the device idle so only those two can hold it.
    let powerAndNetwork = TaskBehavior.Submission(
        processingID, kind: .processing, requiresNetwork: true, requiresExternalPower: true)

    func report(_ sim: Simulation, _ identifier: String, of id: AppID = processingApp) throws -> TaskHistoryReport {
        try #require(try sim.history(of: id, identifier: identifier).first)
    }

    func held(_ report: TaskHistoryReport, _ reason: WaitReason) -> Double {
        report.held.first { $0.reason == reason }?.seconds ?? 0
    }

    @Test("SCH-8: a request pending 3 h — 2 h with no network, then 1 h waiting for a charger — reports exactly those totals, then its run")
    func exactHoldDurations() throws {
        var sim = Simulation()
        try sim.setConditions(ConditionOverrides(charging: true, network: NetworkKind.none, idle: true))
        sim.install(schedulingManifest(processingApp), pending: [powerAndNetwork])
        sim.run(for: .seconds(2 * 3600))
        try sim.setConditions(ConditionOverrides(charging: false, network: .unmetered, idle: true))
        sim.run(for: .seconds(3600))
        let waiting = try report(sim, processingID)
        #expect(waiting.held.map(\.reason) == [.noNetwork, .externalPower])
        #expect(held(waiting, .noNetwork) == 7200 && held(waiting, .externalPower) == 3600)
        #expect(waiting.waited == 10_800 && waiting.runs.isEmpty)

        try sim.setConditions(ConditionOverrides(charging: true, network: .unmetered, idle: true))
        let charging = sim.now
        sim.run(for: .seconds(6 * 3600))
        let after = try report(sim, processingID)
        #expect(held(after, .noNetwork) == 7200 && held(after, .externalPower) == 3600, "the totals do not move after")
        let run = try #require(after.runs.first)
        #expect(run.outcome == .completed && run.result == .newData && !run.forced && run.start == .launched)
        // What was left of the wait after the charger came is the policy's own (planned time), ending as the run began.
        #expect(after.waited == 10_800 + held(after, .plannedTime))
        #expect(run.startedAt == charging + .seconds(double: held(after, .plannedTime)))
        checkArchive(sim)
    }

    @Test("SCH-8: overlapping holds each count their own time, so the totals add up to more than the time waited")
    func overlappingHolds() throws {
        var sim = Simulation()
        try sim.setConditions(ConditionOverrides(charging: false, network: NetworkKind.none, idle: true))
        sim.install(schedulingManifest(processingApp), pending: [powerAndNetwork])
        sim.run(for: .seconds(3600))
        try sim.setConditions(ConditionOverrides(charging: false, network: .unmetered, idle: true))
        sim.run(for: .seconds(1800))
        let report = try report(sim, processingID)
        #expect(held(report, .noNetwork) == 3600)
        #expect(held(report, .externalPower) == 5400)
        #expect(report.waited == 5400)
        #expect(report.held.reduce(0) { $0 + $1.seconds } == 9000, "more than the 5,400 s waited")
    }

    @Test("SCH-8: a time-bound hold (an earliest begin date) lifts exactly at its time, and the app in the foreground is its own reason")
    func timeBoundHoldAndForeground() throws {
        var tasks = TaskBehavior()
        tasks.submitsOnLaunch = [TaskBehavior.Submission(refreshID, earliestAfter: .seconds(5400))]
        var sim = Simulation()
        sim.install(schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks, tasks))
        try sim.openAndSettle(refreshApp)
        sim.run(for: .seconds(600))
        sim.home()
        sim.lock()  // asleep: the policy plans the refresh hours away rather than waking the device
        sim.run(for: .seconds(2 * 3600))
        let report = try report(sim, refreshID, of: refreshApp)
        #expect(held(report, .earliestBegin) == 5400, "from the submission to the date, to the nanosecond")
        let inFront = held(report, .inForeground)
        #expect(approximately(inFront, 600, within: 5), "in front from the submission until home: \(inFront)")
        #expect(report.waited == report.held.first { $0.reason == .earliestBegin }!.seconds + held(report, .plannedTime))
    }

    @Test("SCH-8: a request submitted again after its run starts a new wait; each run closes the wait before it")
    func resubmittedRequest() throws {
        var tasks = TaskBehavior()
        tasks.resubmitAfter = .seconds(3600)
        var sim = Simulation()
        sim.lock()
        sim.install(
            schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks, tasks),
            pending: [TaskBehavior.Submission(refreshID, earliestAfter: .seconds(1800))])
        sim.run(for: .seconds(600))
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(7200))
        let report = try report(sim, refreshID, of: refreshApp)
        #expect(report.runs.count >= 1)
        let first = report.runs[0]
        #expect(first.forced && first.outcome == .completed && first.duration(at: sim.now) >= 2)
        let waits = sim.historyArchive.waits.filter { $0.identifier == refreshID }
        #expect(waits.first?.endedAt == first.startedAt, "the wait before the run ends as it starts")
        let resubmitted = try #require(waits.first { $0.startedAt >= first.endedAt! })
        #expect(resubmitted.startedAt == first.endedAt! && resubmitted.reasons == [.earliestBegin])
        // Before the run: 600 s of its earliest begin date; after it, the full hour of the new one.
        #expect(held(report, .earliestBegin) == 600 + 3600)
        checkArchive(sim)
    }

    @Test("SCH-8: every way a run ends is recorded as its outcome: completed, expired, cut off, app ended, daemon stopped")
    func outcomes() throws {
        func run(_ tasks: TaskBehavior, _ body: (inout Simulation) throws -> Void) throws -> RunRecord {
            var sim = Simulation()
            sim.lock()
            sim.install(schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks, tasks), pending: [refreshSubmission])
            try sim.runTaskNow(refreshApp, refreshID)
            try body(&sim)
            checkArchive(sim)
            return try #require(sim.historyArchive.runs.first)
        }
        var quick = TaskBehavior()
        quick.results = [.noData]
        let completed = try run(quick) { $0.run(for: .seconds(5)) }
        #expect(completed.outcome == .completed && completed.result == .noData && completed.expiry == nil)

        var slow = TaskBehavior()
        slow.runtime = .seconds(20)
        let expired = try run(slow) { sim in
            sim.run(for: .seconds(1))
            try sim.expireTaskNow(refreshApp, refreshID)
            sim.run(for: .seconds(3))
        }
        #expect(expired.outcome == .expired && expired.expiry == .forced && expired.result == .failed)

        var stubborn = TaskBehavior()
        stubborn.runtime = nil
        stubborn.completesOnExpiration = false
        let cutOff = try run(stubborn) { $0.run(for: .seconds(40)) }
        #expect(cutOff.outcome == .cutOff && cutOff.expiry == .runtime && cutOff.result == nil)
        #expect(cutOff.duration(at: .epoch) == 35, "runtime 30 s and grace 5 s")

        let crashed = try run(slow) { sim in
            sim.run(for: .seconds(1))
            sim.killProcess(of: refreshApp)
            sim.run(for: .seconds(1))
        }
        #expect(crashed.outcome == .appEnded && crashed.detail?.contains("signal 9") == true)

        // Ended for memory while it ran (SPEC MEM-1): explain's history says why, not only the signal.
        let endedForMemory = try run(slow) { sim in
            sim.run(for: .seconds(1))
            sim.measureMemory([refreshApp: 30 << 20])
            sim.machineReading(MachineReading(memoryPressure: .critical))
            sim.run(for: .seconds(5))
        }
        #expect(endedForMemory.outcome == .appEnded)
        #expect(
            endedForMemory.detail?.contains("the app was ended: ended for memory (pressure critical): background-work, 30 MB (killed by signal 9)") == true,
            "\(endedForMemory.detail ?? "")")

        let stopped = try run(slow) { sim in
            sim.run(for: .seconds(1))
            sim.shutdown()
            sim.run(for: .seconds(10))
        }
        #expect(stopped.outcome == .daemonStopped)
    }

    @Test("SCH-8, SCH-11: a continued-processing task the user cancels ends as cancelled; its wait for a slot is recorded")
    func cancelledContinued() throws {
        var configuration = CoreConfiguration()
        configuration.continuedProcessing.slots = 1
        var tasks = TaskBehavior()
        tasks.runtime = nil
        let exporter: AppID = "com.example.exporter"
        var sim = Simulation(configuration: configuration)
        sim.install(
            Manifest(id: exporter, executable: "app", permittedTaskIdentifiers: ["com.example.export.*"]),
            behavior: AppBehavior().with(\.tasks, tasks))
        try sim.openAndSettle(exporter)
        let submitted = sim.now
        #expect(sim.submitContinued(exporter, "com.example.export.1", title: "First") == nil)
        #expect(sim.submitContinued(exporter, "com.example.export.2", title: "Second") == nil)
        sim.run(for: .seconds(30))
        try sim.reportProgress(exporter, "com.example.export.1", completed: 1, total: 10)
        sim.run(for: .seconds(10))
        _ = try sim.cancelContinued(exporter, "com.example.export.1")
        sim.run(for: .seconds(5))
        let first = try #require(try sim.history(of: exporter, identifier: "com.example.export.1").first?.runs.first)
        #expect(first.outcome == .cancelled && first.expiry == .cancelled && first.kind == .continued)
        let second = try #require(try sim.history(of: exporter, identifier: "com.example.export.2").first)
        #expect(second.held.map(\.reason) == [.continuedSlot])
        let queued = (try #require(first.endedAt) - submitted).inSeconds
        #expect(second.held.first?.seconds == queued, "queued from its submission until the first ended")
        #expect(queued >= 40)
        #expect(second.runs.first?.startedAt == first.endedAt)
        checkArchive(sim)
    }

    @Test("SCH-8: the core keeps only the open waits — a day of condition changes every minute leaves one entry, the rest went out as records")
    func boundedMemory() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(processingApp, modes: [.processing]), pending: [powerAndNetwork])
        for minute in 0..<1440 {
            let network: NetworkKind = minute % 2 == 0 ? .none : .metered
            try sim.setConditions(ConditionOverrides(charging: false, network: network, idle: true))
            sim.run(for: .seconds(60))
        }
        #expect(sim.core.history.openCount == 1, "one pending request, one open wait")
        #expect(sim.historyArchive.waits.count >= 1440)
        let report = try report(sim, processingID)
        #expect(report.waited == 86_400 && held(report, .externalPower) == 86_400)
        #expect(held(report, .noNetwork) == 720 * 60)
        try sim.setConditions(ConditionOverrides(charging: true, network: .unmetered, idle: true))
        sim.run(for: .seconds(3600))
        #expect(sim.core.history.openCount <= 1)
        checkArchive(sim)
    }

    @Test("SCH-8: the history is asked about an installed app, an identifier it may use, and a start in the past")
    func badQuestions() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(refreshApp))
        sim.run(for: .seconds(10))
        #expect(throws: CoreError.notInstalled("com.example.none")) { try sim.history(of: "com.example.none") }
        let unlisted = #expect(throws: CoreError.self) { try sim.history(of: refreshApp, identifier: "com.example.nothing") }
        #expect(unlisted?.code == .notPermitted)
        let future = #expect(throws: CoreError.self) { try sim.history(of: refreshApp, since: sim.now + .seconds(60)) }
        #expect(future?.code == .invalidArgument && future?.fix.contains("--since") == true)
        #expect(try sim.history(of: refreshApp, identifier: refreshID).isEmpty)
    }

    @Test("SCH-8: a window clips waits exactly; open waits and runs count up to now; runs overlapping the window are kept whole")
    func windowClipping() {
        let t0 = Instant(secondsSinceEpoch: 1_000_000)
        let app: AppID = "com.example.a"
        let waits = [
            WaitRecord(app: app, identifier: "x", kind: .appRefresh, startedAt: t0, endedAt: t0 + .seconds(100), reasons: [.noNetwork]),
            WaitRecord(
                app: app, identifier: "x", kind: .appRefresh, startedAt: t0 + .seconds(100), endedAt: t0 + .seconds(150),
                reasons: [.noNetwork, .inForeground]),
            WaitRecord(app: app, identifier: "x", kind: .appRefresh, startedAt: t0 + .seconds(200), endedAt: nil, reasons: [.plannedTime]),
        ]
        var run = RunRecord(
            app: app, identifier: "x", kind: .appRefresh, run: 7, startedAt: t0 + .seconds(150), forced: false, start: .resumed)
        run.endedAt = t0 + .seconds(200)
        run.outcome = .completed
        let reports = TaskHistoryReport.reports(waits: waits, runs: [run], from: t0 + .seconds(40), to: t0 + .seconds(260))
        let report = reports[0]
        #expect(reports.count == 1 && report.runs == [run])
        #expect(report.held == [
            .init(reason: .noNetwork, seconds: 110), .init(reason: .plannedTime, seconds: 60), .init(reason: .inForeground, seconds: 50),
        ])
        #expect(report.waited == 170)
        #expect(TaskHistoryReport.reports(waits: waits, runs: [run], from: t0 + .seconds(201), to: t0 + .seconds(202))[0].runs.isEmpty)
    }

    /// What a shell may rely on: the waits of one request never overlap and none lasts no time.
    func checkArchive(_ sim: Simulation, sourceLocation: SourceLocation = #_sourceLocation) {
        let byKey = Dictionary(grouping: sim.historyArchive.waits) { TaskKey(app: $0.app, identifier: $0.identifier) }
        for (key, waits) in byKey {
            let sorted = waits.sorted { $0.startedAt < $1.startedAt }
            for (a, b) in zip(sorted, sorted.dropFirst()) {
                #expect(a.endedAt.map { $0 <= b.startedAt } == true, "\(key): \(a) overlaps \(b)", sourceLocation: sourceLocation)
            }
            for wait in waits {
                #expect(wait.endedAt != wait.startedAt, "\(key): a wait of no time", sourceLocation: sourceLocation)
                #expect(!wait.reasons.isEmpty, sourceLocation: sourceLocation)
            }
        }
    }
}
