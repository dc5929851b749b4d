import Foundation
import OffstageProtocol
import Testing

/// SPEC SCH-11 (continued processing, `BGContinuedProcessingTask`) on the real daemon with the real `Exporter` example:
/// an export the user starts in the foreground keeps the app running in the background while it reports progress, the
/// user sees and cancels it, pressure ends the task with the least progress, and the device's slots are queued for or
/// refused. Each export writes real files into the app's data folder, which the tests count and read.
@Suite("Continued processing on the real daemon (SPEC SCH-11)", .serialized)
struct ContinuedProcessingIntegrationTests {
    static let exporter = "com.example.exporter"
    static let pattern = "com.example.exporter.export.*"
    static let first = "com.example.exporter.export.1"
    static let settings = DaemonHarness.fastTimings

    /// Installs the Exporter as `id`: each time it becomes active it submits one export of `items` items taking
    /// `itemMilliseconds` each, with `strategy`.
    static func install(
        _ daemon: DaemonHarness, id: String = exporter, items: Int, itemMilliseconds: Int, strategy: String = "queue"
    ) throws {
        try daemon.install(
            "Exporter", id: id,
            [
                "BGTaskSchedulerPermittedIdentifiers": [pattern],
                "OffstageLinux": [
                    "Environment": [
                        "EXPORT_ON_OPEN": "1", "EXPORT_ITEMS": "\(items)", "EXPORT_ITEM_MS": "\(itemMilliseconds)",
                        "EXPORT_STRATEGY": strategy,
                    ]
                ],
            ])
    }

    /// The user opens the app, which submits an export: waits until it says how that went.
    static func openAndSubmit(_ daemon: DaemonHarness, _ id: String) throws {
        try daemon.ok("open", id)
        try daemon.waitUntil("\(id) submitted its export") {
            let output = daemon.output(id)
            return output.contains("submitted com.example.exporter.export.") || output.contains("submit refused")
        }
    }

    /// The app's continued-processing tasks as `offstage apps --json` shows them.
    static func continued(_ daemon: DaemonHarness, _ id: String) throws -> [ControlInterface.ContinuedTaskMessage] {
        try daemon.app(id).continuedTasks
    }

    static func tasks(_ daemon: DaemonHarness, _ id: String) throws -> [ControlInterface.TaskMessage] {
        try JSONDecoder().decode([ControlInterface.TaskMessage].self, from: Data(try daemon.ok("--json", "tasks", id).utf8))
    }

    /// The end-of-run log line of the app's continued-processing task `identifier`, once there is one.
    static func done(_ daemon: DaemonHarness, _ id: String, _ identifier: String = first) throws -> String? {
        try daemon.log(id).last {
            $0.kind == "taskDone" && $0.message.hasPrefix("continued-processing task '\(identifier)'")
        }?.message
    }

    /// The files of export `number` in the app's data folder, sorted.
    static func exported(_ daemon: DaemonHarness, _ id: String, export number: Int = 1) -> [String] {
        let folder = daemon.stateDirectory + "/data/\(id)/exports/\(number)"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("item-") }.sorted()
    }

    /// With one slot on the device, taken by an export of `runningItems` in the Exporter, a second install
    /// (`com.example.exporter-queue`, 10 items) is opened and queues its export: runs `body` with both ids.
    static func withOneSlotTaken(
        runningItems: Int, itemMilliseconds: Int, _ body: (DaemonHarness, String, String) throws -> Void
    ) throws {
        let running = exporter
        let queued = "com.example.exporter-queue"
        let settings = settings.merging(["continuedProcessing": ["slots": 1]]) { _, new in new }
        try withDaemon(settings: settings) { daemon in
            try install(daemon, id: running, items: runningItems, itemMilliseconds: itemMilliseconds)
            try install(daemon, id: queued, items: 10, itemMilliseconds: 100)
            try openAndSubmit(daemon, running)
            try daemon.waitUntil("the first export started") { daemon.output(running).contains("export started") }
            try openAndSubmit(daemon, queued)
            try body(daemon, running, queued)
        }
    }

    /// The item count in the app's `export expired at N of M` line.
    static func expiredAt(_ output: String) -> Int? {
        guard let range = output.range(of: "export expired at ") else { return nil }
        return Int(output[range.upperBound...].prefix { $0.isNumber })
    }

    @Test("SCH-11: an export the user started keeps the app running in the background with its progress shown; every file is written, the log says it succeeded, and the app is then suspended")
    func exportContinuesInTheBackground() throws {
        try withDaemon(settings: Self.settings) { daemon in
            try Self.install(daemon, items: 20, itemMilliseconds: 200)
            try Self.openAndSubmit(daemon, Self.exporter)
            #expect(daemon.output(Self.exporter).contains("register \(Self.pattern): true"))
            #expect(daemon.output(Self.exporter).contains("submitted \(Self.first) (strategy queue)"))
            try daemon.waitUntil("the export started") { daemon.output(Self.exporter).contains("export started") }
            let pid = try #require(try daemon.app(Self.exporter).pid)

            // `offstage tasks` shows it as the user's running work, with its title.
            let listed = try #require(try Self.tasks(daemon, Self.exporter).first { $0.identifier == Self.first })
            #expect(listed.kind == "continued" && listed.state == "running", "\(listed)")
            #expect(listed.title == "Exporting 20 items", "\(listed)")

            try daemon.ok("home")
            try daemon.waitUntil("the exporter is in the background") { try daemon.app(Self.exporter).state == "background" }
            // People see it too: `offstage apps` lists the work under its title, with its progress.
            let table = try daemon.ok("apps")
            #expect(
                table.contains("continued processing:")
                    && table.contains("\(Self.exporter) \(Self.first) 'Exporting 20 items' — 'export 1'"), "\(table)")

            // While it exports the app runs (not frozen) and its progress advances, as `offstage apps` shows it.
            var seen: [Int64] = []
            var checkedRunning = 0
            try daemon.waitUntil("the export is over", timeout: 20) {
                let app = try daemon.app(Self.exporter)
                guard let task = app.continuedTasks.first(where: { $0.identifier == Self.first }) else { return true }
                #expect(task.state == "running" && task.title == "Exporting 20 items", "\(task)")
                if task.total > 0 {
                    #expect(task.total == 20, "\(task)")
                    if seen.last != task.completed { seen.append(task.completed) }
                }
                // Well before the end (1 s of work left at least): it must be running, not frozen.
                if app.state == "background", task.total > 0, task.completed <= 15 {
                    #expect(!ProcessProbe.isFrozen(pid), "frozen at \(task.completed) of 20 while its export runs")
                    checkedRunning += 1
                }
                return false
            }
            #expect(checkedRunning > 0, "the running app was looked at during its export")
            #expect(seen.count >= 3, "progress advanced in steps: \(seen)")
            #expect(seen == seen.sorted(), "progress only grows: \(seen)")

            let done = try #require(try Self.done(daemon, Self.exporter))
            #expect(done.contains("('Exporting 20 items') succeeded after"), "\(done)")
            let output = daemon.output(Self.exporter)
            #expect(output.contains("export done: 20 files in exports/1"), "\(output)")
            let background = try #require(output.range(of: "did-enter-background"))
            #expect(output[background.upperBound...].contains("exported 20 of 20"), "it kept working in the background")

            // The effect is real: twenty files with what the app wrote into them.
            let files = Self.exported(daemon, Self.exporter)
            #expect(files.count == 20, "\(files)")
            let tenth = try String(
                contentsOfFile: daemon.stateDirectory + "/data/\(Self.exporter)/exports/1/item-0010.txt", encoding: .utf8)
            #expect(tenth.hasPrefix("export 1 item 10 of 20\n"), "\(tenth)")

            // Its work done, the app is suspended like any other in the background.
            try daemon.waitFor(Self.exporter, "suspended", timeout: 5)
            #expect(ProcessProbe.isFrozen(pid))
            #expect(try daemon.app(Self.exporter).pid == pid, "the same process throughout")
            #expect(try Self.continued(daemon, Self.exporter).isEmpty)
        }
    }

    @Test("SCH-11: the log's last word on a finished export is the progress the app reached (100 % (20 of 20)), not an earlier report")
    func finishedExportIsLoggedAtItsFinalProgress() throws {
        try withDaemon(settings: Self.settings) { daemon in
            try Self.install(daemon, items: 20, itemMilliseconds: 100)
            try Self.openAndSubmit(daemon, Self.exporter)
            try daemon.ok("home")
            try daemon.waitUntil("the export is done", timeout: 15) { try Self.done(daemon, Self.exporter) != nil }
            #expect(daemon.output(Self.exporter).contains("export done: 20 files"))
            let done = try #require(try Self.done(daemon, Self.exporter))
            #expect(done.contains("succeeded after"), "\(done)")
            // The last report, still waiting out the SDK's throttle, goes before the completion.
            #expect(done.contains("at 100 % (20 of 20)"), "\(done)")
        }
    }

    @Test("SCH-11: `offstage cancel-task` calls the running export's expiration handler: it stops, the log says the user cancelled it, the app is suspended; bad input names the thing and changes nothing")
    func userCancelsARunningExport() throws {
        try withDaemon(settings: Self.settings) { daemon in
            try Self.install(daemon, items: 100, itemMilliseconds: 150)
            try Self.openAndSubmit(daemon, Self.exporter)
            try daemon.ok("home")
            let pid = try #require(try daemon.app(Self.exporter).pid)
            try daemon.waitUntil("the export made some progress") {
                try Self.continued(daemon, Self.exporter).first.map { $0.completed >= 3 } ?? false
            }

            // Bad input: exit codes as for every verb (3: no such app, 5: no such task), the thing named.
            let unknownApp = try daemon.cli(["cancel-task", "com.example.nobody", Self.first])
            #expect(unknownApp.status == 3 && unknownApp.stderr.contains("com.example.nobody"), "\(unknownApp.stderr)")
            let unknownTask = try daemon.cli(["cancel-task", Self.exporter, "com.example.exporter.export.99"])
            #expect(
                unknownTask.status == 5 && unknownTask.stderr.contains("com.example.exporter.export.99"), "\(unknownTask.stderr)")
            let running = try #require(try Self.continued(daemon, Self.exporter).first)
            #expect(running.identifier == Self.first && running.state == "running" && running.endedBecause == nil, "\(running)")
            #expect(!daemon.output(Self.exporter).contains("export expired"), "nothing was cancelled")
            #expect(try daemon.log(Self.exporter).allSatisfy { !$0.message.contains("cancelled by the user") })

            let reply = try daemon.ok("cancel-task", Self.exporter, Self.first)
            #expect(reply.contains("cancelled '\(Self.first)'") && reply.contains("expiration handler"), "\(reply)")
            try daemon.waitUntil("the app's expiration handler ran") { daemon.output(Self.exporter).contains("export expired at") }
            try daemon.waitUntil("the task ended") { try Self.done(daemon, Self.exporter) != nil }
            let done = try #require(try Self.done(daemon, Self.exporter))
            #expect(done.contains("failed after") && done.hasSuffix("— cancelled by the user"), "\(done)")
            #expect(
                try daemon.log(Self.exporter).contains {
                    $0.kind == "taskExpire" && $0.message.contains(Self.first) && $0.message.contains("cancelled by the user")
                })

            // It stopped where the handler says: the files on disk are the items it reported, and no more come.
            let output = daemon.output(Self.exporter)
            let stoppedAt = try #require(Self.expiredAt(output), "\(output)")
            #expect(stoppedAt >= 3 && stoppedAt < 100, "\(output)")
            try daemon.waitFor(Self.exporter, "suspended", timeout: 5)
            #expect(ProcessProbe.isFrozen(pid))
            #expect(Self.exported(daemon, Self.exporter).count == stoppedAt)
            #expect(!output.contains("export done"))
            #expect(try Self.continued(daemon, Self.exporter).isEmpty)

            // Cancelling it again: it is gone.
            let again = try daemon.cli(["cancel-task", Self.exporter, Self.first])
            #expect(again.status == 5 && again.stderr.contains(Self.first), "\(again.stderr)")
        }
    }

    @Test("SCH-11: an export that reports no progress for the progress timeout is expired, the log saying how long it was silent")
    func silentExportIsExpired() throws {
        let settings = Self.settings.merging(["continuedProcessing": ["progressTimeout": 1]]) { _, new in new }
        try withDaemon(settings: settings) { daemon in
            // Each item takes 3 s: the app reports its total at the start, then nothing for longer than the timeout.
            try Self.install(daemon, items: 5, itemMilliseconds: 3_000)
            try Self.openAndSubmit(daemon, Self.exporter)
            try daemon.ok("home")
            try daemon.waitUntil("the app's expiration handler ran") { daemon.output(Self.exporter).contains("export expired at 0 of 5") }
            try daemon.waitUntil("the task ended") { try Self.done(daemon, Self.exporter) != nil }
            let done = try #require(try Self.done(daemon, Self.exporter))
            #expect(done.contains("failed after") && done.contains("— it reported no progress for 1"), "\(done)")
            try daemon.waitFor(Self.exporter, "suspended", timeout: 5)
            #expect(Self.exported(daemon, Self.exporter).isEmpty)
        }
    }

    @Test("SCH-11: in low power mode only one export keeps running: the one with less progress is ended, the log says why, and the other finishes")
    func pressureEndsTheExportWithLeastProgress() throws {
        let fast = Self.exporter
        let slow = "com.example.exporter-slow"
        try withDaemon(settings: Self.settings) { daemon in
            // Two slots (the default). The fast export started first and moves three times as fast: its share done
            // is ahead of the slow one's at every moment.
            try Self.install(daemon, id: fast, items: 80, itemMilliseconds: 100)
            try Self.install(daemon, id: slow, items: 80, itemMilliseconds: 300)
            try Self.openAndSubmit(daemon, fast)
            try daemon.waitUntil("the fast export started") { daemon.output(fast).contains("export started") }
            try Self.openAndSubmit(daemon, slow)
            try daemon.waitUntil("the slow export started") { daemon.output(slow).contains("export started") }
            try daemon.ok("home")
            try daemon.waitUntil("both exports run and report progress") {
                let apps = try daemon.apps()
                let tasks = apps.filter { [fast, slow].contains($0.id) }.flatMap(\.continuedTasks)
                return tasks.count == 2 && tasks.allSatisfy { $0.state == "running" && $0.completed >= 1 }
            }
            #expect(try daemon.app(fast).state == "background" && daemon.app(slow).state == "background")

            try daemon.ok("device", "--low-power", "on")
            try daemon.waitUntil("the slow export's expiration handler ran") { daemon.output(slow).contains("export expired at") }
            try daemon.waitUntil("the slow export ended") { try Self.done(daemon, slow) != nil }
            let ended = try #require(try Self.done(daemon, slow))
            #expect(ended.contains("failed after"), "\(ended)")
            #expect(
                ended.contains("ended under pressure (low power mode is on): it reported the least progress (")
                    && ended.contains("of the 2 running"), "\(ended)")

            // The other keeps its slot and finishes every item.
            #expect(!daemon.output(fast).contains("export expired"))
            try daemon.waitUntil("the fast export finished", timeout: 15) { try Self.done(daemon, fast) != nil }
            let finished = try #require(try Self.done(daemon, fast))
            #expect(finished.contains("succeeded after"), "\(finished)")
            #expect(daemon.output(fast).contains("export done: 80 files in exports/1"))
            #expect(Self.exported(daemon, fast).count == 80)
            let slowStoppedAt = try #require(Self.expiredAt(daemon.output(slow)))
            #expect(slowStoppedAt < 80 && Self.exported(daemon, slow).count == slowStoppedAt)
            try daemon.waitFor(fast, "suspended", timeout: 5)
            try daemon.waitFor(slow, "suspended", timeout: 5)
        }
    }

    @Test("SCH-11: with one slot taken, a `fail` submission is refused saying no slot is free, while a `queue` one waits and starts once the slot is free")
    func fullSlotsRefuseOrQueue() throws {
        let running = Self.exporter
        let failing = "com.example.exporter-fail"
        let queued = "com.example.exporter-queue"
        let settings = Self.settings.merging(["continuedProcessing": ["slots": 1]]) { _, new in new }
        try withDaemon(settings: settings) { daemon in
            try Self.install(daemon, id: running, items: 40, itemMilliseconds: 200)
            try Self.install(daemon, id: failing, items: 10, itemMilliseconds: 100, strategy: "fail")
            try Self.install(daemon, id: queued, items: 10, itemMilliseconds: 100)
            try Self.openAndSubmit(daemon, running)
            try daemon.waitUntil("the first export started") { daemon.output(running).contains("export started") }

            try Self.openAndSubmit(daemon, failing)
            let refused = daemon.output(failing)
            #expect(
                refused.contains("submit refused: unavailable: no continued-processing slot is free")
                    && refused.contains(running), "\(refused)")
            #expect(try Self.continued(daemon, failing).isEmpty && Self.tasks(daemon, failing).isEmpty)

            try Self.openAndSubmit(daemon, queued)
            #expect(daemon.output(queued).contains("submitted \(Self.first) (strategy queue)"))
            let waiting = try #require(try Self.continued(daemon, queued).first)
            #expect(waiting.state == "queued" && waiting.title == "Exporting 10 items", "\(waiting)")
            let pending = try #require(try Self.tasks(daemon, queued).first)
            #expect(pending.kind == "continued" && pending.state == "pending", "\(pending)")
            #expect(pending.summary.contains("1 of 1 taken"), "\(pending.summary)")

            // The user leaves; the queued export's app is suspended like any other until its turn comes.
            try daemon.ok("home")
            try daemon.waitFor(queued, "suspended", timeout: 5)
            try daemon.waitUntil("the first export finished", timeout: 20) { try Self.done(daemon, running) != nil }
            let firstDone = try #require(try daemon.log(running).last { $0.kind == "taskDone" })
            try daemon.waitUntil("the queued export finished", timeout: 10) { try Self.done(daemon, queued) != nil }
            let started = try #require(try daemon.log(queued).first { $0.kind == "taskRun" })
            #expect(started.message.contains("a slot is free") && started.message.contains("resumed"), "\(started.message)")
            #expect(started.at >= firstDone.at, "it started only once the slot was free")
            #expect(try Self.done(daemon, queued)?.contains("succeeded after") == true)
            #expect(daemon.output(queued).contains("export done: 10 files in exports/1"))
            #expect(Self.exported(daemon, queued).count == 10)
            #expect(!daemon.output(failing).contains("export started"), "the refused export never ran")
            try daemon.waitFor(queued, "suspended", timeout: 5)
        }
    }

    @Test("SCH-11: a queued export whose app is no longer running launches it into the background (continued-processing) once a slot is free")
    func queuedExportLaunchesTheApp() throws {
        try Self.withOneSlotTaken(runningItems: 30, itemMilliseconds: 200) { daemon, running, queued in
            try daemon.ok("home")
            try daemon.waitFor(queued, "suspended", timeout: 5)
            // The system reclaims the suspended app (a kill by the pid the daemon started for this test).
            let pid = try #require(try daemon.app(queued).pid)
            kill(pid, SIGKILL)
            try daemon.waitFor(queued, "notRunning")
            #expect(try Self.continued(daemon, queued).map(\.state) == ["queued"], "the request outlives the process")

            try daemon.waitUntil("the queued export launched its app", timeout: 20) {
                try daemon.app(queued).launchReason == "continued-processing"
            }
            try daemon.waitUntil("the queued export finished", timeout: 10) { try Self.done(daemon, queued) != nil }
            #expect(try Self.done(daemon, queued)?.contains("succeeded after") == true)
            #expect(try daemon.log(queued).contains { $0.kind == "taskRun" && $0.message.contains("launched into the background") })
            let output = daemon.output(queued)
            #expect(output.contains("export done: 10 files in exports/1"), "\(output)")
            #expect(output.contains("did-finish-launching (continued-processing)"), "the app is told why it was launched: \(output)")
            #expect(output.contains("state=background"), "launched into the background, not the foreground: \(output)")
            try daemon.waitFor(queued, "suspended", timeout: 5)
        }
    }

    @Test("SCH-11: force-quitting an app drops its queued export: it never starts, and the log says why")
    func forceQuitDropsQueuedExports() throws {
        try Self.withOneSlotTaken(runningItems: 20, itemMilliseconds: 150) { daemon, running, queued in
            #expect(try Self.continued(daemon, queued).map(\.state) == ["queued"])
            try daemon.ok("force-quit", queued)
            try daemon.waitFor(queued, "notRunning")
            #expect(try Self.continued(daemon, queued).isEmpty && Self.tasks(daemon, queued).isEmpty)
            #expect(
                try daemon.log(queued).contains {
                    $0.message.contains("dropped 1 queued continued-processing request(s) (\(Self.first))")
                        && $0.message.contains("force-quit")
                })
            try daemon.waitUntil("the first export finished", timeout: 15) { try Self.done(daemon, running) != nil }
            // Give the freed slot a moment: nothing takes it.
            Thread.sleep(forTimeInterval: 0.5)
            #expect(try daemon.app(queued).state == "notRunning")
            #expect(try !daemon.log(queued).contains { $0.kind == "taskRun" })
        }
    }

    @Test("SCH-11, LC-8: kill -9 of the daemon in the middle of an export: the app lives on, the restarted daemon takes the export up again with its progress, it finishes with every file, and the app is suspended after")
    func exportOutlivesTheDaemon() throws {
        let daemon = try DaemonHarness(settings: Self.settings)
        defer { daemon.tearDown() }
        try daemon.start()
        try Self.install(daemon, items: 40, itemMilliseconds: 100)
        try Self.openAndSubmit(daemon, Self.exporter)
        try daemon.ok("home")
        try daemon.waitUntil("the export is under way") { daemon.output(Self.exporter).contains("exported 5 of 40") }
        let pid = try #require(try daemon.app(Self.exporter).pid)

        daemon.crash()
        #expect(ProcessProbe.isAlive(pid), "the app outlives the daemon")
        try daemon.start()
        try daemon.waitUntil("the restarted daemon took the export up again") {
            try daemon.log(Self.exporter).contains {
                $0.message.hasPrefix("continued-processing task '\(Self.first)'") && $0.message.contains("taken up again after a daemon restart")
            }
        }
        #expect(try Self.continued(daemon, Self.exporter).first?.state == "running")
        #expect(!ProcessProbe.isFrozen(pid), "still running in the background for its export")
        try daemon.waitUntil("the export finished", timeout: 20) { try Self.done(daemon, Self.exporter) != nil }
        let done = try #require(try Self.done(daemon, Self.exporter))
        #expect(done.contains("succeeded") && done.contains("at 100 % (40 of 40)"), "\(done)")
        #expect(Self.exported(daemon, Self.exporter).count == 40)
        try daemon.waitFor(Self.exporter, "suspended", timeout: 10)
        #expect(try daemon.app(Self.exporter).pid == pid, "the same process throughout")
    }
}
