import OffstageCore
import OffstageSimulator
import Testing

private let exporter: AppID = "com.example.exporter"
private let sync: AppID = "com.example.sync"
private let pattern = "com.example.export.*"

/// An app that lists a pattern for its continued-processing tasks and declares no background mode.
private func install(
    _ sim: inout Simulation, _ id: AppID, runtime: Duration? = nil, completesOnExpiration: Bool = true
) {
    var tasks = TaskBehavior()
    tasks.runtime = runtime
    tasks.completesOnExpiration = completesOnExpiration
    sim.install(
        Manifest(id: id, executable: "app", permittedTaskIdentifiers: [pattern, "com.example.refresh"]),
        behavior: AppBehavior().with(\.tasks, tasks))
}

private func configuration(slots: Int = 2, underPressure: Int = 1, timeout: Double = 60) -> CoreConfiguration {
    var configuration = CoreConfiguration()
    configuration.continuedProcessing.slots = slots
    configuration.continuedProcessing.slotsUnderPressure = underPressure
    configuration.continuedProcessing.progressTimeout = timeout
    return configuration
}

@Suite("Continued processing (SPEC SCH-11)")
struct ContinuedProcessingTests {
    @Test("SCH-11: submitted in the foreground, the task starts at once and keeps the app running in the background until it completes; then the app is suspended")
    func startsAndKeepsRunning() throws {
        var sim = Simulation(configuration: configuration())
        install(&sim, exporter, runtime: .seconds(30))
        try sim.openAndSettle(exporter)
        #expect(sim.submitContinued(exporter, "com.example.export.1", title: "Exporting 120 photos") == nil)
        sim.run(for: .milliseconds(100))
        #expect(sim.callbacks(of: exporter).contains("runTask"))
        sim.home()
        sim.run(for: .seconds(20))
        #expect(sim.state(of: exporter) == .background, "not suspended while the task runs")
        #expect(sim.continuedTasks(of: exporter).map(\.state) == [.running])
        sim.run(for: .seconds(12))
        #expect(sim.state(of: exporter) == .suspended)
        #expect(sim.continuedTasks(of: exporter).isEmpty)
        let done = try #require(sim.logLines(of: exporter, .taskDone).last)
        #expect(done.contains("continued-processing task 'com.example.export.1' ('Exporting 120 photos') succeeded"))
    }

    @Test("SCH-11: only the foreground app may submit; the identifier must be listed or covered by a pattern; a title is required and there is no earliest begin date; nothing is queued on refusal")
    func submissionRules() throws {
        var sim = Simulation(configuration: configuration())
        install(&sim, exporter)
        try sim.openAndSettle(exporter)
        #expect(sim.submitContinued(exporter, "com.example.other.1", title: "Export")?.code == .notPermitted)
        #expect(sim.submitContinued(exporter, "com.example.export.", title: "Export")?.code == .notPermitted)
        #expect(sim.submitContinued(exporter, "com.example.export.1", title: "  ")?.code == .invalidArgument)
        #expect(sim.submitContinued(exporter, "com.example.export.1", title: "a\u{7}b")?.code == .invalidArgument)
        let dated = TaskRequest(
            identifier: "com.example.export.1", kind: .continued, earliestBegin: sim.now + .seconds(60), submittedAt: sim.now,
            continued: .init(title: "Export"))
        #expect(sim.submitRequest(exporter, dated)?.message.contains("no earliest begin date") == true)
        sim.home()
        sim.run(for: .milliseconds(100))
        let background = sim.submitContinued(exporter, "com.example.export.1", title: "Export")
        #expect(background?.code == .notPermitted)
        #expect(background?.message.contains("in the background") == true)
        #expect(sim.core.apps[exporter]?.durable.schedule.requests.isEmpty == true, "nothing queued")
        #expect(sim.continuedTasks(of: exporter).isEmpty)
    }

    @Test("SCH-11: with every slot taken, strategy fail is refused naming the running tasks, and strategy queue waits; the queued request starts when a slot frees, in the order submitted")
    func strategies() throws {
        var sim = Simulation(configuration: configuration(slots: 1))
        install(&sim, exporter, runtime: .seconds(10))
        install(&sim, sync, runtime: .seconds(10))
        try sim.openAndSettle(exporter)
        #expect(sim.submitContinued(exporter, "com.example.export.1", title: "Exporting") == nil)
        sim.run(for: .milliseconds(100))
        try sim.openAndSettle(sync)
        let refused = sim.submitContinued(sync, "com.example.export.a", title: "Syncing", strategy: .fail)
        #expect(refused?.code == .unavailable)
        #expect(refused?.message.contains("'com.example.exporter': 'Exporting'") == true)
        #expect(sim.continuedTasks(of: sync).isEmpty)
        #expect(sim.submitContinued(sync, "com.example.export.b", title: "Syncing") == nil)
        sim.run(for: .milliseconds(100))
        #expect(sim.continuedTasks(of: sync).map(\.state) == [.queued])
        let queued = try sim.core.tasks(of: sync, at: sim.now).first { $0.identifier == "com.example.export.b" }
        #expect(queued?.summary == "queued for a continued-processing slot: 1 of 1 taken")
        sim.run(for: .seconds(10))
        #expect(sim.continuedTasks(of: sync).map(\.state) == [.running], "started once the exporter's task completed")
        #expect(sim.logLines(of: sync, .taskRun).last?.contains("started (running): a slot is free") == true)
    }

    @Test("SCH-11: a queued request whose app has been terminated meanwhile launches it into the background (reason continued-processing)")
    func queuedLaunchesTheApp() throws {
        var sim = Simulation(configuration: configuration(slots: 1))
        install(&sim, exporter, runtime: .seconds(10))
        install(&sim, sync, runtime: .seconds(2))
        try sim.openAndSettle(exporter)
        sim.submitContinued(exporter, "com.example.export.1", title: "Exporting")
        try sim.openAndSettle(sync)
        sim.submitContinued(sync, "com.example.export.2", title: "Syncing")
        try sim.openAndSettle(exporter)
        // The sync app is killed by the system (it is suspended): its queued request stays.
        sim.run(for: .seconds(2))
        sim.killProcess(of: sync)
        sim.run(for: .milliseconds(100))
        #expect(sim.state(of: sync) == .notRunning)
        #expect(sim.continuedTasks(of: sync).map(\.state) == [.queued])
        sim.run(for: .seconds(9))
        #expect(sim.core.apps[sync]?.process?.reason == .continuedProcessing)
        #expect(sim.callbacks(of: sync).suffix(2) == ["didFinishLaunching", "runTask"])
    }

    @Test("SCH-11: progress is shown as reported and renews the task's time; a task silent for the progress timeout is expired, with the reason recorded")
    func progressAndSilence() throws {
        var sim = Simulation(configuration: configuration(timeout: 10))
        install(&sim, exporter)
        try sim.openAndSettle(exporter)
        sim.submitContinued(exporter, "com.example.export.1", title: "Exporting")
        sim.home()
        for step in 1...5 {
            sim.run(for: .seconds(8))
            try sim.reportProgress(exporter, "com.example.export.1", completed: Int64(step), total: 50)
        }
        let task = try #require(sim.continuedTasks(of: exporter).first)
        #expect((task.completed, task.total, task.state) == (5, 50, .running), "40 s in, still running: each report renewed it")
        #expect(task.description == "'Exporting' 10 % (5 of 50), running")
        try sim.reportProgress(exporter, "com.example.export.1", completed: 6, total: 50, title: "Exporting album 2")
        #expect(sim.continuedTasks(of: exporter).first?.title == "Exporting album 2")
        sim.run(for: .seconds(10))
        #expect(sim.callbacks(of: exporter).contains("taskExpiring"))
        let done = try #require(sim.logLines(of: exporter, .taskDone).last)
        #expect(done.contains("failed after"))
        #expect(done.contains("at 12 % (6 of 50) — it reported no progress for 10 s"))
        sim.run(for: .seconds(2))
        #expect(sim.state(of: exporter) == .suspended, "suspended once the task is over")
    }

    @Test("SCH-11: the user cancels a running task (its expiration handler runs, the reason is recorded) or a queued one (dropped); unknown and non-continued tasks are refused, changing nothing")
    func userCancels() throws {
        var sim = Simulation(configuration: configuration(slots: 1))
        install(&sim, exporter)
        try sim.openAndSettle(exporter)
        sim.submitContinued(exporter, "com.example.export.1", title: "Exporting")
        sim.submitContinued(exporter, "com.example.export.2", title: "Exporting more")
        try sim.reportProgress(exporter, "com.example.export.1", completed: 3, total: 4)
        #expect(try sim.cancelContinued(exporter, "com.example.export.2") == "cancelled queued 'com.example.export.2' before it started")
        #expect(sim.continuedTasks(of: exporter).map(\.identifier) == ["com.example.export.1"])
        let message = try sim.cancelContinued(exporter, "com.example.export.1")
        #expect(message == "cancelled 'com.example.export.1' at 75 % (3 of 4): the app's expiration handler was called")
        sim.run(for: .milliseconds(100))
        #expect(sim.callbacks(of: exporter).last == "taskExpiring")
        #expect(sim.logLines(of: exporter, .taskDone).last?.hasSuffix("at 75 % (3 of 4) — cancelled by the user") == true)

        let unknown = #expect(throws: CoreError.self) { try sim.cancelContinued(exporter, "com.example.export.9") }
        #expect(unknown?.code == .noSuchTask)
        #expect(unknown?.fix.contains("offstage tasks com.example.exporter") == true)
        #expect(throws: CoreError.self) { try sim.cancelContinued("com.example.nobody", "com.example.export.1") }
        #expect(sim.submit(exporter, TaskBehavior.Submission("com.example.refresh")) != nil, "refresh needs the fetch mode")
    }

    @Test("SCH-11: under pressure the task reporting the least progress is ended first, with the reason recorded; the other keeps running")
    func pressureEndsLeastProgress() throws {
        var sim = Simulation(configuration: configuration(slots: 2, underPressure: 1))
        install(&sim, exporter)
        install(&sim, sync)
        try sim.openAndSettle(exporter)
        sim.submitContinued(exporter, "com.example.export.1", title: "Exporting")
        try sim.openAndSettle(sync)
        sim.submitContinued(sync, "com.example.export.2", title: "Syncing")
        sim.home()
        try sim.reportProgress(exporter, "com.example.export.1", completed: 30, total: 100)
        try sim.reportProgress(sync, "com.example.export.2", completed: 1, total: 2)
        sim.run(for: .seconds(1))
        var settings = sim.core.device.settings
        settings.lowPowerMode = true
        sim.setDeviceSettings(settings)
        sim.run(for: .milliseconds(100))
        let ended = try #require(sim.logLines(of: exporter, .taskDone).last)
        #expect(ended.contains("— ended under pressure (low power mode is on): it reported the least progress (30 % (30 of 100)) of the 2 running"))
        #expect(sim.continuedTasks(of: sync).map(\.state) == [.running])
        #expect(sim.logLines(of: sync, .taskDone).isEmpty)
    }

    @Test("SCH-11: a low battery not charging is pressure too; with no slot left under pressure every task ends, and a queued request waits until the pressure is gone")
    func batteryPressure() throws {
        var sim = Simulation(configuration: configuration(slots: 1, underPressure: 0))
        install(&sim, exporter)
        try sim.openAndSettle(exporter)
        sim.submitContinued(exporter, "com.example.export.1", title: "Exporting")
        sim.submitContinued(exporter, "com.example.export.2", title: "Exporting more")
        try sim.setConditions(ConditionOverrides(batteryLevel: 8, charging: false))
        sim.run(for: .milliseconds(100))
        #expect(sim.logLines(of: exporter, .taskDone).last?.contains("the battery is at 8 %, not charging") == true)
        #expect(sim.continuedTasks(of: exporter).map(\.state) == [.queued])
        let summary = try sim.core.tasks(of: exporter, at: sim.now).first { $0.identifier == "com.example.export.2" }?.summary
        #expect(summary == "queued for a continued-processing slot: 0 of 0 taken (the battery is at 8 %, not charging: 0 under pressure)")
        try sim.setConditions(ConditionOverrides(charging: true))
        sim.run(for: .milliseconds(100))
        #expect(sim.continuedTasks(of: exporter).map(\.state) == [.running])
    }

    @Test("SCH-11: force-quit drops the app's queued requests and ends its running one; they do not come back")
    func forceQuitDropsQueued() throws {
        var sim = Simulation(configuration: configuration(slots: 1))
        install(&sim, exporter)
        try sim.openAndSettle(exporter)
        sim.submitContinued(exporter, "com.example.export.1", title: "Exporting")
        sim.submitContinued(exporter, "com.example.export.2", title: "Exporting more")
        try sim.forceQuit(exporter)
        sim.run(for: .seconds(10))
        #expect(sim.continuedTasks(of: exporter).isEmpty)
        #expect(sim.core.apps[exporter]?.durable.schedule.requests.isEmpty == true)
        #expect(sim.logLines(of: exporter, .schedule).last?.contains("dropped 1 queued continued-processing request(s) (com.example.export.2): the user force-quit the app") == true)
        #expect(sim.state(of: exporter) == .notRunning)
    }

    @Test("SCH-11: bad progress reports are refused naming the field; a report for a finished run is harmless; a refresh run reports no progress")
    func badProgress() throws {
        var sim = Simulation(configuration: configuration())
        install(&sim, exporter)
        try sim.openAndSettle(exporter)
        sim.submitContinued(exporter, "com.example.export.1", title: "Exporting")
        let id = "com.example.export.1"
        let pid = try #require(sim.core.apps[exporter]?.process?.pid)
        let negative = #expect(throws: CoreError.self) { try sim.reportProgress(exporter, id, completed: -1, total: 5) }
        #expect(negative?.code == .invalidArgument)
        #expect(negative?.message.contains("neither may be negative") == true)
        #expect(throws: CoreError.self) { try sim.reportProgress(exporter, id, completed: 1, total: 5, title: "") }
        let task = try #require(sim.continuedTasks(of: exporter).first)
        #expect(task.completed == 0 && task.title == "Exporting", "nothing changed")
        let unknown = #expect(throws: CoreError.self) { try sim.reportProgress(exporter, id, completed: 1, total: 5, run: 999_999) }
        #expect(unknown?.code == .noSuchTask && unknown?.message == "'\(exporter)' has no task run 999999")
        #expect(throws: CoreError.self) { try sim.reportProgress(exporter, id, completed: 1, total: 5, pid: pid + 1) }
    }

    @Test("SCH-11: the policy ends the least progress first, and among equals the task started last; ending tasks count as gone")
    func policyOrder() {
        let policy = ContinuedProcessingPolicy(limits: .init())
        func running(_ app: AppID, _ run: UInt64, _ done: Int64, startedAt seconds: Int64, ending: Bool = false)
            -> ContinuedProcessingPolicy.Running
        {
            .init(
                app: app, run: run,
                progress: ContinuedProgress(completed: done, total: 10, title: "t", subtitle: "", reportedAt: .epoch),
                startedAt: .epoch + .seconds(seconds), ending: ending)
        }
        let tasks = [
            running(exporter, 1, 5, startedAt: 0), running(sync, 2, 2, startedAt: 0), running(sync, 3, 2, startedAt: 5),
            running(exporter, 4, 0, startedAt: 0, ending: true),
        ]
        #expect(policy.toEnd(tasks, slots: 1).map(\.run) == [3, 2])
        #expect(policy.toEnd(tasks, slots: 3).isEmpty)
        #expect(policy.free(running: 3, underPressure: false) == 0)
        var conditions = DeviceConditions(batteryLevel: 10, charging: false, network: .unmetered, idle: false, lowPowerMode: false)
        #expect(policy.pressure(conditions) == "the battery is at 10 %, not charging")
        conditions.charging = true
        #expect(policy.pressure(conditions) == nil)
    }

    @Test("SCH-11, LC-8: after a daemon restart the app reports its running task and the new daemon takes it up with its progress: it keeps the app running, renews on reports and completes as before; a task its manifest does not cover is not taken up")
    func takenUpAfterRestart() throws {
        let now = Instant(secondsSinceEpoch: 100)
        var core = adoptedExporter(numberSeed: 1, at: now)
        let progress = ContinuedProgress(completed: 7, total: 20, title: "Exporting", subtitle: "album", reportedAt: now)
        let report = AttachReport(
            launchCompleted: true, state: .background,
            continuedTasks: [
                .init(run: 41, identifier: "com.example.export.1", progress: progress),
                .init(run: 42, identifier: "com.example.other.1", progress: progress),
            ])
        _ = try core.attached(exporter, pid: 777, report: report, at: now)
        let status = try #require(core.status(of: exporter, at: now))
        #expect(status.continued.map(\.identifier) == ["com.example.export.1"])
        let task = try #require(status.continued.first)
        #expect(task.completed == 7 && task.total == 20 && task.state == .running && task.subtitle == "album")
        // It keeps the app running past the suspend delay, as before the restart.
        let later = now + .seconds(5)
        #expect(!core.advance(to: later).contains(.freeze(exporter, pid: 777)))
        _ = try core.reportTaskProgress(exporter, pid: 777, run: 41, completed: 20, total: 20, title: nil, subtitle: nil, at: later)
        let actions = try core.completeTask(exporter, pid: 777, run: 41, result: .newData, at: later)
        let done = Self.taskDoneMessages(actions)
        #expect(done.first?.contains("succeeded after 5 s at 100 % (20 of 20)") == true)
        #expect(core.upcomingNumber > 41, "new runs never reuse the number of the run taken up")
    }

    /// The messages of the `taskDone` log entries among `actions`.
    static func taskDoneMessages(_ actions: [CoreAction]) -> [String] {
        actions.compactMap { if case .log(let entry) = $0, entry.kind == .taskDone { entry.message } else { nil } }
    }

    /// A restarted daemon's core (numbers from `numberSeed`) that found the exporter alive as pid 777, not reattached yet.
    func adoptedExporter(numberSeed: UInt64, at now: Instant) -> OffstageCore {
        var core = OffstageCore(numberSeed: numberSeed)
        let manifest = Manifest(id: exporter, executable: "app", permittedTaskIdentifiers: [pattern])
        core.restore(InstalledApp(manifest: manifest, bundlePath: "/x", installedAt: now), durable: .init())
        _ = core.adopt(exporter, pid: 777, at: now)
        return core
    }

    @Test("SCH-11, LC-8: a run the app completes after a daemon restart, before its report arrives, is over: the report read before the completion still lists it, and it is not taken up again; a number this daemon never handed out is still refused")
    func completedBeforeTheReport() throws {
        // Found by the crash harness under load: the SDK read its running exports for its report, the app completed
        // one, and the completion reached the restarted daemon first; refused as unknown, the run was then taken up
        // from the report and listed running until its progress timeout, though the app had ended it.
        let now = Instant(secondsSinceEpoch: 100)
        var core = adoptedExporter(numberSeed: 100, at: now)
        let actions = try core.completeTask(exporter, pid: 777, run: 41, result: .newData, at: now)
        let done = Self.taskDoneMessages(actions)
        #expect(done == ["task run 41 of the previous daemon completed before the app reported what it runs"])
        // A number at or above this daemon's first one was never a run of the previous daemon: refused as before.
        #expect(throws: CoreError.self) { try core.completeTask(exporter, pid: 777, run: 100, result: .newData, at: now) }

        let progress = ContinuedProgress(completed: 20, total: 20, title: "Exporting", subtitle: "", reportedAt: now)
        let report = AttachReport(
            launchCompleted: true, state: .background,
            continuedTasks: [
                .init(run: 41, identifier: "com.example.export.1", progress: progress),
                .init(run: 42, identifier: "com.example.export.2", progress: progress),
            ])
        _ = try core.attached(exporter, pid: 777, report: report, at: now)
        let status = try #require(core.status(of: exporter, at: now))
        #expect(status.continued.map(\.identifier) == ["com.example.export.2"], "\(status.continued)")
        #expect(core.apps[exporter]?.process?.completedBeforeReport.isEmpty == true)
        // Once reattached, an unknown number is refused again.
        #expect(throws: CoreError.self) { try core.completeTask(exporter, pid: 777, run: 43, result: .newData, at: now) }
    }

    @Test("SCH-11, LC-8: after a daemon restart a queued request waits until the apps found alive have reattached and reported what they run: adopting another app first does not launch a second instance of the exporter, and the slots its running tasks hold are respected")
    func queuedWaitsForReattachAfterRestart() throws {
        // Found by the crash harness (seed 1): the daemon adopts survivors app by app, and each adoption ran the
        // scheduler, which started the exporter's queued request before the exporter itself was adopted: a second
        // instance was launched, the first (running an export) could not reattach and exited, and both exports were lost.
        var core = OffstageCore(numberSeed: 1)
        let now = Instant(secondsSinceEpoch: 100)
        let other: AppID = "com.example.alarm"
        core.restore(
            InstalledApp(manifest: Manifest(id: other, executable: "app"), bundlePath: "/a", installedAt: now), durable: .init())
        var durable = AppDurableState()
        durable.schedule.requests["com.example.export.3"] = TaskRequest(
            identifier: "com.example.export.3", kind: .continued, submittedAt: now, continued: ContinuedTaskDetails(title: "Exporting"))
        let manifest = Manifest(id: exporter, executable: "app", permittedTaskIdentifiers: [pattern])
        core.restore(InstalledApp(manifest: manifest, bundlePath: "/x", installedAt: now), durable: durable)
        func launches(_ actions: [CoreAction]) -> [AppID] {
            actions.compactMap { if case .launch(let id, _) = $0 { id } else { nil } }
        }
        // Survivors in the order of their ids, as the daemon adopts them; then its recovery pass.
        #expect(launches(core.adopt(other, pid: 700, at: now)).isEmpty, "the exporter's own process is yet to be adopted")
        #expect(launches(core.adopt(exporter, pid: 777, at: now)).isEmpty)
        #expect(core.apps[exporter]?.process?.pid == 777, "the process found alive is adopted")
        #expect(launches(core.recover(at: now)).isEmpty)
        #expect(try #require(core.status(of: exporter, at: now)).continued.map(\.state) == [.queued])

        // The other app reattaches: the exporter has not reported yet, so the queue still waits.
        _ = try core.attached(other, pid: 700, report: AttachReport(launchCompleted: true, state: .background), at: now)
        #expect(try #require(core.status(of: exporter, at: now)).continued.map(\.state) == [.queued])
        // The exporter reports its two running exports: both slots are taken, the request stays queued.
        let progress = ContinuedProgress(completed: 3, total: 40, title: "Exporting", subtitle: "", reportedAt: now)
        let report = AttachReport(
            launchCompleted: true, state: .background,
            continuedTasks: [
                .init(run: 41, identifier: "com.example.export.1", progress: progress),
                .init(run: 42, identifier: "com.example.export.2", progress: progress),
            ])
        #expect(launches(try core.attached(exporter, pid: 777, report: report, at: now)).isEmpty)
        let status = try #require(core.status(of: exporter, at: now))
        #expect(status.continued.map(\.state) == [.running, .running, .queued], "\(status.continued)")

        // One ends: the queued request starts in the same process.
        let later = now + .seconds(1)
        #expect(launches(try core.completeTask(exporter, pid: 777, run: 41, result: .newData, at: later)).isEmpty)
        let after = try #require(core.status(of: exporter, at: later))
        #expect(after.continued.map(\.identifier) == ["com.example.export.2", "com.example.export.3"], "\(after.continued)")
        #expect(after.continued.allSatisfy { $0.state == .running })
        #expect(core.apps[exporter]?.process?.pid == 777)
    }
}

extension ContinuedProcessingTests {
    @Test("SCH-11, LC-8: a request the store still has queued but the app reports running after a daemon restart (killed between handing the start to the app and writing it) runs once: it leaves the queue and is not started again when a slot frees")
    func reportedRunningLeavesTheQueue() throws {
        // Found by the crash harness (seed 1, on two slow cores): the daemon handed export 7's start to the app, was
        // killed before the store wrote it, and after the restart started export 7 a second time in the same process.
        var core = OffstageCore(numberSeed: 1)
        let now = Instant(secondsSinceEpoch: 100)
        var durable = AppDurableState()
        for (number, offset) in [(7, 0), (8, 1)] {
            durable.schedule.requests["com.example.export.\(number)"] = TaskRequest(
                identifier: "com.example.export.\(number)", kind: .continued, submittedAt: now + .seconds(offset),
                continued: ContinuedTaskDetails(title: "Exporting"))
        }
        let manifest = Manifest(id: exporter, executable: "app", permittedTaskIdentifiers: [pattern])
        core.restore(InstalledApp(manifest: manifest, bundlePath: "/x", installedAt: now), durable: durable)
        var actions = core.adopt([(exporter, 777)], at: now) + core.recover(at: now)
        let progress = ContinuedProgress(completed: 24, total: 40, title: "Exporting", subtitle: "", reportedAt: now)
        let report = AttachReport(
            launchCompleted: true, state: .background,
            continuedTasks: [.init(run: 41, identifier: "com.example.export.7", progress: progress)])
        let attached = try core.attached(exporter, pid: 777, report: report, at: now)
        actions += attached
        #expect(attached.contains { if case .saveApp(exporter) = $0 { true } else { false } }, "the queue's change is written")
        #expect(core.apps[exporter]?.durable.schedule.requests["com.example.export.7"] == nil)
        let status = try #require(core.status(of: exporter, at: now))
        // Two slots: export 7 (taken up) and export 8 (started from the queue); export 7 is listed once.
        #expect(status.continued.map(\.identifier) == ["com.example.export.7", "com.example.export.8"], "\(status.continued)")
        #expect(status.continued.first?.completed == 24, "the progress the app reported, not a fresh start")

        // Export 7 ends: nothing starts it again.
        let later = now + .seconds(1)
        actions += try core.completeTask(exporter, pid: 777, run: 41, result: .newData, at: later)
        let after = try #require(core.status(of: exporter, at: later))
        #expect(after.continued.map(\.identifier) == ["com.example.export.8"], "\(after.continued)")
        let starts = actions.compactMap { if case .log(let entry) = $0, entry.kind == .taskRun { entry.message } else { nil } }
        #expect(starts.filter { $0.contains("'com.example.export.7'") && $0.contains(") started (") }.isEmpty, "\(starts)")
        #expect(starts.filter { $0.contains("'com.example.export.8'") && $0.contains(") started (") }.count == 1, "\(starts)")
    }
}
