import Foundation
import OffstageProtocol
import OffstageSimulator

/// Continued processing in the crash harness (SPEC SCH-11, SCH-10): two real Exporter apps, one submitting with
/// strategy `queue` and one with `fail`, export while the daemon is killed under them. Now and then the harness opens
/// one (each time it becomes active it submits a new export, `com.example.exporter.export.<n>`), sometimes several times
/// in a row so that the device's two slots fill and requests queue, and goes home; the exports run in the background
/// reporting their progress. It also cancels a listed task as the user (`offstage cancel-task`), force-quits an
/// exporter, and aims some kills: a moment after an export's last items (its completion and the start of a queued one),
/// in the middle of a `cancel-task`, and just after an open (while the app submits).
///
/// The truth is each app's own output (`logs/<app>.log`): `submitted X`, `submit refused: …`, `export started (X, …`,
/// `export done: N files in exports/<n>`, `export expired at I of N (X)`, and `did-finish-launching` at each launch.
/// What is checked (``checkContinued(final:)``), after every restart and at the end:
/// - a queued request survives a kill -9: each export the app was told was submitted is still queued, or running, or
///   was run by the app — unless the user cancelled it, force-quit its app, or the daemon's log records its end;
/// - nothing runs twice: each export starts at most once in its app and ends at most once there, and the daemon's log
///   starts and ends it at most once;
/// - an export running in its app when the daemon died is taken up again by the restarted daemon (listed as running),
///   and one whose process died has its end recorded in the daemon's log (or was ended by a force-quit);
/// - an export cancelled by the user is never listed as running again, one queued and cancelled never starts, and one
///   ended by a force-quit (queued or running) is never listed or started again;
/// - the daemon lists nothing the app does not run (a task its app ended, or whose process is gone), and nothing queued
///   the app did not submit;
/// - the progress the daemon shows never goes backwards for the same task, within a daemon's lifetime or across a
///   restart (the app reports its current progress when it reattaches);
/// - at the end, once the queue has drained, nothing is listed, every export the app started has ended exactly once
///   (or with its process, recorded), and a success in the daemon's log is a success in the app's.
struct ContinuedLedger {
    /// Running tasks ("app X") the user cancelled, acknowledged by the daemon: never listed as running again.
    var cancelledRunning: Set<String> = []
    /// Queued requests the user cancelled, acknowledged: never started or listed again.
    var cancelledQueued: Set<String> = []
    /// Cancels cut by a kill: either outcome is right.
    var uncertainCancels: Set<String> = []
    /// Per app, the number of launches in its output when a force-quit of it was acknowledged (each launch starts
    /// with did-finish-launching): every export it submitted before is over and never comes back.
    var forceQuits: [String: [Int]] = [:]
    /// Per app, the number of lines in its output at each acknowledged or uncertain force-quit.
    var forceQuitLines: [String: [Int]] = [:]
    /// The progress last seen per task: the daemon's lifetime (its starts so far) and the units completed.
    var progress: [String: (lifetime: Int, completed: Int64)] = [:]
    /// Violations already reported, so that a broken fact is reported once, not after every restart.
    var reported: Set<String> = []
    var figures = ContinuedFigures()
}

/// What the continued-processing load did.
struct ContinuedFigures {
    var opens = 0
    var submitted = 0
    var refused = 0
    /// Submit calls cut by a kill (the app heard no answer): the request may or may not exist.
    var submitsCut = 0
    var started = 0
    var finished = 0
    var expired = 0
    /// Exports whose app's process ended under them (force-quit, multitasking off).
    var endedWithProcess = 0
    var cancels = 0
    var forceQuits = 0
    /// Runs the restarted daemon took up again from the app's reattach report (from its log).
    var takenUp = 0
    var endedUnderPressure = 0
    var progressSamples = 0
    var killsNearEnd = 0
    var killsMidCancel = 0
    var killsMidSubmit = 0
    var lost = 0
    var ranTwice = 0
    var endedTwice = 0
    var cameBack = 0
    var backwards = 0

    var summary: String {
        "continued processing: \(opens) opens of an exporter, \(submitted) exports submitted (\(refused) refused, "
            + "\(submitsCut) submits cut by a kill), \(started) started, \(finished) finished, \(expired) expired "
            + "(\(cancels) cancels by the user, \(endedUnderPressure) ended under pressure), \(endedWithProcess) ended with "
            + "their app (\(forceQuits) force-quits), \(takenUp) taken up again after a restart, \(progressSamples) progress "
            + "samples; kills: \(killsNearEnd) near an export's end, \(killsMidCancel) during cancel-task, \(killsMidSubmit) "
            + "after an open\ncontinued lost: \(lost), run twice: \(ranTwice), ended twice: \(endedTwice), came back: "
            + "\(cameBack), progress backwards: \(backwards)"
    }
}

extension HarnessApp {
    static let exportPrefix = "com.example.exporter.export."

    /// The exporters: the first queues its exports, the second asks for a slot now or nothing (strategy `fail`).
    static var exporters: [HarnessApp] { [exporter("com.crash.export1", strategy: "queue"), exporter("com.crash.export2", strategy: "fail")] }

    /// The Exporter example, submitting an export of 40 items of 100 ms each time it becomes active.
    static func exporter(_ id: String, strategy: String) -> HarnessApp {
        HarnessApp(
            id: id, example: "Exporter",
            manifest: [
                "BGTaskSchedulerPermittedIdentifiers": ["com.example.exporter.export.*"],
                "OffstageLinux": [
                    "Environment": [
                        "EXPORT_ON_OPEN": "1", "EXPORT_ITEMS": "40", "EXPORT_ITEM_MS": "100", "EXPORT_STRATEGY": strategy,
                    ]
                ],
            ])
    }
}

/// One exporter's output, read whole.
struct ExporterOutput {
    /// Launches (did-finish-launching lines).
    var launches = 0
    var lines = 0
    /// Per export: the line of its `submitted` (when the app heard the daemon accept it).
    var submitted: [String: Int] = [:]
    /// Per export: the launch (1-based) of each `export started`.
    var started: [String: [Int]] = [:]
    /// Per export: each end, `done` or `expired`.
    var ends: [String: [String]] = [:]
    var refused = 0
    /// Refusals that are not the daemon's answer (the call was cut by a kill): the export may exist.
    var uncertainRefusals = 0
    /// Lines saying an export failed by itself (a file it could not write).
    var failures: [String] = []
    /// The time of the last line of each launch (seconds since the epoch), to see whether a kill fell just after it.
    var lastLineTime: [Int: Double] = [:]

    init(text: String) {
        let midnight = Calendar.current.startOfDay(for: Date()).timeIntervalSince1970
        for line in text.split(separator: "\n") {
            lines += 1
            let words = line.split(separator: " ", maxSplits: 1)
            guard words.count == 2 else { continue }
            let clock = words[0].split(separator: ":")
            if clock.count == 3, let hours = Double(clock[0]), let minutes = Double(clock[1]), let seconds = Double(clock[2]) {
                var time = midnight + hours * 3600 + minutes * 60 + seconds
                if time > Date().timeIntervalSince1970 + 60 { time -= 86_400 }  // written before midnight
                lastLineTime[launches] = time
            }
            let body = words[1]
            if body.hasPrefix("did-finish-launching") {
                launches += 1
            } else if body.hasPrefix("submitted ") {
                let identifier = String(body.dropFirst("submitted ".count).prefix { $0 != " " })
                submitted[identifier] = lines
            } else if body.hasPrefix("submit refused: ") {
                refused += 1
                // The daemon's own answers name why; anything else (unreachable, cut) leaves it open.
                let known = [
                    "unavailable: no continued-processing slot is free", "unavailable: continued processing is not available",
                    "notPermitted:", "tooManyPendingRequests:",
                ]
                if !known.contains(where: { body.dropFirst("submit refused: ".count).hasPrefix($0) }) { uncertainRefusals += 1 }
            } else if body.hasPrefix("export started (") {
                let identifier = String(body.dropFirst("export started (".count).prefix { $0 != "," })
                started[identifier, default: []].append(launches)
            } else if body.hasPrefix("export done: "), let range = body.range(of: " in exports/") {
                ends[HarnessApp.exportPrefix + body[range.upperBound...], default: []].append("done")
            } else if body.hasPrefix("export expired at "), body.hasSuffix(")"), let open = body.lastIndex(of: "(") {
                ends[String(body[body.index(after: open)..<body.index(before: body.endIndex)]), default: []].append("expired")
            } else if body.hasPrefix("export failed") {
                failures.append(String(line))
            }
        }
    }
}

/// What the daemon's log says of one exporter's tasks.
struct ContinuedDaemonLog {
    var started: [String: Int] = [:]
    var done: [String: [String]] = [:]
    var takenUp = 0
    /// Queued requests the log says were dropped at a force-quit or cancelled by the user.
    var dropped: Set<String> = []

    init(_ lines: [ControlInterface.LogLine]) {
        for line in lines {
            let message = line.message
            if message.hasPrefix("continued-processing task '"),
                let identifier = message.dropFirst("continued-processing task '".count).split(separator: "'").first.map(String.init)
            {
                if line.kind == "taskDone" { done[identifier, default: []].append(message) }
                if line.kind == "taskRun", message.contains(") started (") { started[identifier, default: 0] += 1 }
                if message.contains("taken up again after a daemon restart") { takenUp += 1 }
            } else if message.hasPrefix("dropped "), message.contains("queued continued-processing request(s) ("),
                let open = message.firstIndex(of: "("), let close = message[open...].firstIndex(of: ")")
            {
                for identifier in message[message.index(after: open)..<close].split(separator: ",") {
                    dropped.insert(identifier.trimmingCharacters(in: .whitespaces))
                }
            } else if message.hasPrefix("queued continued-processing request '"), message.hasSuffix("' cancelled by the user") {
                dropped.insert(String(message.dropFirst("queued continued-processing request '".count).dropLast("' cancelled by the user".count)))
            }
        }
    }
}

extension CrashRun {
    /// Installs the exporters (at the first start).
    func setUpContinued() throws {
        for app in HarnessApp.exporters {
            try makeBundle(app)
            let installed = try daemon.cli(["install", bundlePath(app)])
            guard installed.status == 0 else { throw HarnessError("install \(app.id): \(installed.stderr)") }
        }
    }

    /// Now and then: the user starts exports (opening an exporter, once or a few times in a row, and going home),
    /// cancels one, or force-quits an exporter; then the progress shown is sampled.
    func driveContinued() throws {
        guard continuedRandom.chance(0.45) else { return }
        let roll = continuedRandom.unit()
        if roll < 0.62 {
            let app = HarnessApp.exporters[continuedRandom.chance(0.75) ? 0 : 1]
            let times = continuedRandom.chance(0.4) ? 2 + continuedRandom.index(below: 2) : 1
            for _ in 0..<times { try openExporter(app, wait: continuedRandom.uniform(0.05, 0.4)) }
        } else if roll < 0.88 {
            try cancelContinued(killingAfter: nil)
        } else {
            let app = HarnessApp.exporters[continuedRandom.index(below: HarnessApp.exporters.count)]
            let output = try daemon.cli(["force-quit", app.id])
            if output.status == 0 {
                let log = exporterOutput(app.id)
                continued.forceQuits[app.id, default: []].append(log.launches)
                continued.forceQuitLines[app.id, default: []].append(log.lines)
                continued.figures.forceQuits += 1
            }
        }
        _ = try sampleContinued()
    }

    /// Opens an exporter, which submits an export once active, waits up to `wait` seconds for it to say how that went
    /// (going home sooner sometimes leaves it no time to), and goes home.
    private func openExporter(_ app: HarnessApp, wait: Double) throws {
        let before = exporterOutput(app.id)
        if try daemon.cli(["open", app.id]).status == 0 { continued.figures.opens += 1 }
        let deadline = Date().addingTimeInterval(wait)
        while Date() < deadline {
            let now = exporterOutput(app.id)
            if now.submitted.count + now.refused > before.submitted.count + before.refused { break }
            usleep(20_000)
        }
        _ = try daemon.cli(["home"])
    }

    /// Cancels one listed task of an exporter, as the user; with `killingAfter`, kills the daemon that many seconds
    /// after the call starts.
    private func cancelContinued(killingAfter delay: Double?) throws {
        let listed = try exporterViews().flatMap { app in
            app.continuedTasks.filter { $0.state != "ending" }.map { (app.id, $0.identifier) }
        }
        guard !listed.isEmpty else { return }
        let (app, identifier) = listed[continuedRandom.index(below: listed.count)]
        let key = app + " " + identifier
        let started = try daemon.startCLI(["cancel-task", app, identifier])
        if let delay {
            usleep(UInt32(delay * 1_000_000))
            daemon.crash()
            continued.figures.killsMidCancel += 1
        }
        let output = daemon.finish(started)
        if output.status == 0 {
            continued.figures.cancels += 1
            if output.stdout.contains("cancelled queued") {
                continued.cancelledQueued.insert(key)
            } else if output.stdout.contains("cancelled '") {
                continued.cancelledRunning.insert(key)
            }
        } else if delay != nil {
            continued.uncertainCancels.insert(key)
        }
    }

    /// Half the cycles that reach their end with the daemon running (no other load's kill came first) end with a kill
    /// aimed at continued processing instead of the usual one: a moment after a running export's last items (its
    /// completion, and the start of a queued one), in the middle of a `cancel-task`, or just after an open (while the
    /// app submits).
    func aimContinuedKill() throws {
        let aimed = continuedRandom.chance(0.5)
        let roll = continuedRandom.unit()
        let delay = continuedRandom.unit()
        guard aimed, daemon.process?.isRunning == true else { return }
        switch roll {
        case ..<0.45:
            let deadline = Date().addingTimeInterval(0.6)
            while Date() < deadline {
                let nearEnd = try sampleContinued().contains { $0.state == "running" && $0.total > 0 && $0.total - $0.completed <= 2 }
                if nearEnd {
                    usleep(UInt32(delay * 300_000))
                    daemon.crash()
                    continued.figures.killsNearEnd += 1
                    return
                }
                usleep(30_000)
            }
        case ..<0.75:
            try cancelContinued(killingAfter: delay * 0.03)
        default:
            let app = HarnessApp.exporters[delay < 0.7 ? 0 : 1]
            if try daemon.cli(["open", app.id]).status == 0 { continued.figures.opens += 1 }
            usleep(UInt32(delay * 250_000))
            daemon.crash()
            continued.figures.killsMidSubmit += 1
        }
    }

    /// The exporters as the daemon lists them.
    private func exporterViews() throws -> [ControlInterface.App] {
        try daemon.apps().filter { app in HarnessApp.exporters.contains { $0.id == app.id } }
    }

    /// Reads the progress the daemon shows; a task whose completed units went down since the last look is a violation.
    /// Returns the exporters' listed tasks.
    @discardableResult
    private func sampleContinued(_ views: [ControlInterface.App]? = nil) throws -> [ControlInterface.ContinuedTaskMessage] {
        let views = try views ?? exporterViews()
        let lifetime = daemon.answerTimes.count
        var tasks: [ControlInterface.ContinuedTaskMessage] = []
        for app in views {
            for task in app.continuedTasks where task.state != "queued" {
                tasks.append(task)
                continued.figures.progressSamples += 1
                let key = app.id + " " + task.identifier
                if task.total > 0, task.completed > task.total {
                    continuedViolation(key + " over", "\(task.identifier) of \(app.id) shows \(task.completed) of \(task.total)")
                }
                if let last = continued.progress[key], task.completed < last.completed {
                    continued.figures.backwards += 1
                    let when = last.lifetime == lifetime ? "within one daemon lifetime" : "across a restart"
                    continuedViolation(
                        key + " backwards \(lifetime)",
                        "progress of \(task.identifier) of \(app.id) went back from \(last.completed) to \(task.completed) (\(when))")
                }
                continued.progress[key] = (lifetime, max(task.completed, continued.progress[key]?.completed ?? 0))
            }
        }
        return tasks
    }

    /// A violation reported once per `key`; whether it was new.
    @discardableResult
    private func continuedViolation(_ key: String, _ text: String) -> Bool {
        guard continued.reported.insert(key).inserted else { return false }
        violation(text)
        return true
    }

    private func exporterOutput(_ id: String) -> ExporterOutput {
        ExporterOutput(text: (try? String(contentsOfFile: daemon.state + "/logs/\(id).log", encoding: .utf8)) ?? "")
    }

    // MARK: Checks

    /// Checks the exporters' tasks against their own output and the daemon's view (see ``ContinuedLedger``). The
    /// daemon's view must settle (apps reattach, completions land) within a few seconds; with `final`, the queue is
    /// first left to drain.
    func checkContinued(final: Bool) throws {
        // The exporters' requests are checked here, against the apps' own output: the generic check would take one
        // that started or that the user cancelled since it was seen pending for one lost.
        acknowledged.pendingRequests = acknowledged.pendingRequests.filter { request in
            !HarnessApp.exporters.contains { request.hasPrefix($0.id + "/") }
        }
        if final { try drainContinued(seconds: 60) }
        var daemonLogs: [String: ContinuedDaemonLog] = [:]
        let deadline = Date().addingTimeInterval(final ? 2 : 6)
        var problems: [String: String] = [:]
        repeat {
            problems = try continuedProblems(final: final, daemonLogs: &daemonLogs)
            if problems.isEmpty { break }
            daemonLogs = [:]  // read again: what settles may be in it by now
            usleep(100_000)
        } while Date() < deadline
        for (key, text) in problems.sorted(by: { $0.key < $1.key }) where continuedViolation(key, text) {
            if text.hasPrefix("LOST") { continued.figures.lost += 1 }
            if text.contains("came back") { continued.figures.cameBack += 1 }
            if key.hasSuffix(" twice") { continued.figures.ranTwice += 1 }
            if key.hasSuffix(" ends") { continued.figures.endedTwice += 1 }
        }
        if final { countContinued(daemonLogs: &daemonLogs) }
    }

    /// Waits until no exporter task is listed; with multitasking off the queued ones cannot start, so the user cancels
    /// them.
    private func drainContinued(seconds: Double) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let views = try exporterViews()
            _ = try sampleContinued(views)
            let listed = views.flatMap { app in app.continuedTasks.map { (app.id, $0) } }
            if listed.isEmpty { return }
            if try daemon.settings(app: nil)["multitasking"] == false {
                for (app, task) in listed where task.state == "queued" {
                    if try daemon.cli(["cancel-task", app, task.identifier]).status == 0 {
                        continued.cancelledQueued.insert(app + " " + task.identifier)
                        continued.figures.cancels += 1
                    }
                }
            }
            usleep(250_000)
        }
    }

    /// The problems seen now, by a key naming each; empty when every fact holds.
    private func continuedProblems(final: Bool, daemonLogs: inout [String: ContinuedDaemonLog]) throws -> [String: String] {
        var problems: [String: String] = [:]
        // The daemon first, then the apps' output: an export the daemon ended was ended by its app before (the app
        // writes its end line, then completes), so the output read after holds it.
        let views = try exporterViews()
        try sampleContinued(views)
        for app in HarnessApp.exporters {
            let view = views.first { $0.id == app.id }
            let output = exporterOutput(app.id)
            let live = view?.pid != nil
            let listed = Dictionary((view?.continuedTasks ?? []).map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
            let forceQuitLaunch = continued.forceQuits[app.id]?.max()
            func daemonLog() throws -> ContinuedDaemonLog {
                if let log = daemonLogs[app.id] { return log }
                let log = ContinuedDaemonLog(try daemon.json(["log", "--app", app.id, "--limit", "5000"], as: [ControlInterface.LogLine].self))
                daemonLogs[app.id] = log
                return log
            }
            for failure in output.failures { problems["\(app.id) failure \(failure)"] = "\(app.id) says an export failed by itself: \(failure)" }
            let identifiers = Set(output.submitted.keys).union(output.started.keys).union(output.ends.keys).union(listed.keys)
            for identifier in identifiers.sorted() {
                let key = app.id + " " + identifier
                let name = "\(identifier) of \(app.id)"
                let launches = output.started[identifier] ?? []
                let ends = output.ends[identifier] ?? []
                let submitted = output.submitted[identifier] != nil
                // Ended by a force-quit: submitted or started in a launch up to the one force-quit.
                let quit = forceQuitLaunch.map { launch in
                    (launches.first.map { $0 <= launch } ?? false)
                        || (output.submitted[identifier].map { line in continued.forceQuitLines[app.id]?.contains { $0 >= line } ?? false } ?? false)
                } ?? false
                if launches.count > 1 {
                    problems[key + " twice"] = "\(name) ran twice: started \(launches.count) times in its app (launches \(launches))"
                }
                if ends.count > 1 {
                    problems[key + " ends"] = "\(name) ended \(ends.count) times in its app: \(ends)"
                }
                if !ends.isEmpty && launches.isEmpty { problems[key + " end"] = "\(name) ended in its app, which never started it" }
                if !launches.isEmpty, !submitted, output.uncertainRefusals == 0 {
                    problems[key + " unsubmitted"] = "\(name) started, but its app never submitted it"
                }
                if !launches.isEmpty, continued.cancelledQueued.contains(key) {
                    problems[key + " cancelled ran"] = "\(name) came back: cancelled by the user while queued, it started later"
                }
                if quit, let launch = forceQuitLaunch, launches.contains(where: { $0 > launch }) {
                    problems[key + " quit ran"] = "\(name) came back: ended by a force-quit, it started again later"
                }
                let runningInApp = !launches.isEmpty && ends.isEmpty && live && launches.last == output.launches
                let diedWithProcess = !launches.isEmpty && ends.isEmpty && !runningInApp
                switch listed[identifier]?.state {
                case "running", "ending":
                    let state = listed[identifier]?.state ?? ""
                    if quit {
                        problems[key + " listed"] = "\(name) came back: ended by a force-quit, it is listed \(state) again"
                    } else if continued.cancelledRunning.contains(key), state == "running" {
                        problems[key + " listed"] = "\(name) came back: cancelled by the user, it is listed running again"
                    } else if !ends.isEmpty {
                        problems[key + " listed"] = "\(name) is listed \(state), but its app ended it (\(ends[0]))"
                    } else if diedWithProcess {
                        problems[key + " listed"] = "\(name) is listed \(state), but the process that ran it is gone"
                    } else if launches.isEmpty {
                        problems[key + " listed"] = "\(name) is listed \(state), but its app has not started it"
                    }
                case "queued":
                    if quit || continued.cancelledQueued.contains(key) {
                        problems[key + " listed"] = "\(name) came back: \(quit ? "ended by a force-quit" : "cancelled by the user"), it is queued again"
                    } else if !launches.isEmpty {
                        problems[key + " listed"] = "\(name) is listed queued, but its app has started it"
                    } else if !submitted, output.uncertainRefusals == 0 {
                        problems[key + " listed"] = "\(name) is queued, but its app never submitted it"
                    }
                default:
                    if runningInApp {
                        problems[key + " dropped"] = "\(name) runs in its app (started, not ended), but the daemon does not list it: not taken up again"
                    } else if submitted, launches.isEmpty, !quit, !continued.cancelledQueued.contains(key),
                        !continued.uncertainCancels.contains(key)
                    {
                        let log = try daemonLog()
                        if !log.dropped.contains(identifier), log.done[identifier] == nil {
                            problems[key + " lost"] = "LOST: \(name), submitted (the app was told so), is neither queued nor running; its app never started it, and the daemon's log records no end"
                        }
                    }
                }
                guard final else { continue }
                if listed[identifier] != nil { problems[key + " left"] = "\(name) is still listed (\(listed[identifier]!.state)) at the end" }
                let log = try daemonLog()
                if (log.started[identifier] ?? 0) > 1 {
                    problems[key + " log twice"] = "the daemon's log starts \(name) \(log.started[identifier]!) times"
                }
                let done = log.done[identifier] ?? []
                if done.count > 1 { problems[key + " log ends"] = "the daemon's log ends \(name) \(done.count) times: \(done)" }
                if done.contains(where: { $0.contains(" succeeded after ") }), ends != ["done"] {
                    problems[key + " success"] = "the daemon's log says \(name) succeeded, its app says \(ends.isEmpty ? "nothing" : ends.joined(separator: ", "))"
                }
                if diedWithProcess, done.isEmpty, !quit {
                    // Its app's process died under it (the daemon ended it: multitasking off); the log records the end,
                    // unless a kill came right after, before the daemon's log writer ran.
                    let last = output.lastLineTime[launches.last ?? 0] ?? 0
                    if !daemon.killTimes.contains(where: { $0 >= last - 0.2 && $0 <= last + 1.5 }) {
                        problems[key + " silent"] = "\(name) ended with its app's process, and the daemon's log records no end"
                    }
                }
            }
        }
        return problems
    }

    /// The end-of-run figures, from the apps' output and the daemon's log.
    private func countContinued(daemonLogs: inout [String: ContinuedDaemonLog]) {
        var figures = continued.figures
        (figures.submitted, figures.refused, figures.submitsCut, figures.started, figures.finished, figures.expired) = (0, 0, 0, 0, 0, 0)
        (figures.takenUp, figures.endedUnderPressure, figures.endedWithProcess) = (0, 0, 0)
        for app in HarnessApp.exporters {
            let output = exporterOutput(app.id)
            figures.submitted += output.submitted.count
            figures.refused += output.refused - output.uncertainRefusals
            figures.submitsCut += output.uncertainRefusals
            figures.started += output.started.count
            figures.finished += output.ends.values.filter { $0.first == "done" }.count
            figures.expired += output.ends.values.filter { $0.first == "expired" }.count
            figures.endedWithProcess += output.started.keys.filter { output.ends[$0] == nil }.count
            let log = daemonLogs[app.id]
                ?? (try? daemon.json(["log", "--app", app.id, "--limit", "5000"], as: [ControlInterface.LogLine].self)).map(ContinuedDaemonLog.init)
            figures.takenUp += log?.takenUp ?? 0
            figures.endedUnderPressure += log?.done.values.filter { $0.contains { $0.contains("ended under pressure") } }.count ?? 0
        }
        continued.figures = figures
    }
}
