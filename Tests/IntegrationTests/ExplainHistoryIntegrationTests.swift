import Foundation
import OffstageProtocol
import Testing

/// `offstage explain --history` on the real daemon (SPEC SCH-8, SCH-10): the RefreshApp example's refresh is held by
/// no network for a while, then run; the history reports the run exactly and the hold for at least as long as it was
/// held, also after the daemon restarts. Bad questions get one line naming the problem and the fix.
@Suite("Explain history on the real daemon (SCH-8)", .serialized)
struct ExplainHistoryIntegrationTests {
    static let timings = DaemonHarness.fastTimings.merging(["refreshRuntime": 6, "taskExpirationGrace": 1]) { _, new in new }
    static let app = "com.example.refresh-app"
    static let identifier = "com.example.refresh"

    func history(_ daemon: DaemonHarness, _ arguments: String...) throws -> ControlInterface.ExplainHistoryReply {
        let text = try daemon.ok(["--json", "explain", Self.app, Self.identifier, "--history"] + arguments)
        return try JSONDecoder().decode(ControlInterface.ExplainHistoryReply.self, from: Data(text.utf8))
    }

    func seconds(_ task: ControlInterface.TaskHistoryMessage?, _ reason: String) -> Double {
        task?.held.first { $0.reason == reason }?.seconds ?? 0
    }

    @Test("SCH-8, SCH-10: a refresh held by no network, then run by run-task: the run (resumed, forced, completed: newData) and the no-network total are reported, and still are after a restart")
    func heldThenRun() throws {
        try withDaemon(settings: Self.timings) { daemon in
            try daemon.install(
                "RefreshApp", id: Self.app,
                [
                    "UIBackgroundModes": ["fetch"], "BGTaskSchedulerPermittedIdentifiers": [Self.identifier],
                    "OffstageLinux": ["Arguments": ["--earliest-seconds", "0"]],
                ])
            try daemon.ok("device", "--network", "none")
            let start = DaemonHarness.now()
            try daemon.ok("open", Self.app)
            try daemon.waitUntil("the app submitted its request") { daemon.output(Self.app).contains("submitted refresh request") }
            try daemon.ok("home")
            try daemon.waitFor(Self.app, "suspended")
            // Real time passes on the real daemon: the hold is measured against it.
            Thread.sleep(forTimeInterval: 2)
            let heldUntil = DaemonHarness.now()
            try daemon.ok("run-task", Self.app, Self.identifier)
            try daemon.waitUntil("the run completed") {
                try history(daemon).tasks.first?.runs.first?.outcome != nil
            }
            let end = DaemonHarness.now()
            let reply = try history(daemon)
            #expect(reply.app == Self.app && reply.to - reply.from > 86_399 && reply.keptSeconds == 7 * 86_400)
            let task = try #require(reply.tasks.first)
            #expect(reply.tasks.count == 1 && task.identifier == Self.identifier && task.kind == "refresh")
            let run = try #require(task.runs.first)
            #expect(task.runs.count == 1)
            #expect(run.outcome == "completed" && run.result == "newData" && run.forced && run.start == "resumed", "\(run)")
            #expect(run.startedAt >= heldUntil && run.startedAt <= end && run.seconds >= 0 && run.seconds < 6)
            // No network from the submission (while in front too) until the forced run.
            let noNetwork = seconds(task, "no-network")
            #expect(noNetwork >= 2 && noNetwork <= end - start, "\(task.held)")
            #expect(seconds(task, "in-foreground") > 0 && seconds(task, "in-foreground") < noNetwork)
            #expect(task.waited >= noNetwork && task.waited <= end - start)
            let text = try daemon.ok("explain", Self.app, "--history")
            #expect(text.contains("held back: no network"), "\(text)")
            #expect(text.contains("(resumed, forced): completed: newData"), "\(text)")

            daemon.stop()
            try daemon.start()
            let after = try history(daemon, "--since", "1h")
            let kept = try #require(after.tasks.first)
            #expect(kept.runs.first?.run == run.run && kept.runs.first?.outcome == "completed")
            #expect(seconds(kept, "no-network") >= noNetwork, "what was written before the restart is still there")
        }
    }

    @Test("SCH-8, CLI-1: bad questions — an unknown app or identifier, a --since that is not a time or is in the future, --since without --history — get one line naming what is wrong and the fix")
    func badQuestions() throws {
        try withDaemon(settings: Self.timings) { daemon in
            try daemon.install("RefreshApp", id: Self.app, ["UIBackgroundModes": ["fetch"], "BGTaskSchedulerPermittedIdentifiers": [Self.identifier]])
            func oneLine(_ output: DaemonHarness.Output) -> Bool { output.stderr.split(separator: "\n").count == 1 }
            let unknown = try daemon.cli(["explain", "com.example.nothing", "--history"])
            #expect(unknown.status == 3 && oneLine(unknown) && unknown.stderr.contains("offstage install"), "\(unknown.stderr)")
            let identifier = try daemon.cli(["explain", Self.app, "com.example.unlisted", "--history"])
            #expect(identifier.status == 6 && oneLine(identifier) && identifier.stderr.contains("BGTaskSchedulerPermittedIdentifiers"))
            let garbage = try daemon.cli(["explain", Self.app, "--history", "--since", "yesterday"])
            #expect(garbage.status == 64 && garbage.stderr.contains("--since must be a duration such as 90s"), "\(garbage.stderr)")
            #expect(garbage.stderr.contains("'yesterday'"))
            let future = try daemon.cli(["explain", Self.app, "--history", "--since", "2999-01-01"])
            #expect(future.status == 64 && future.stderr.contains("is in the future; give a time before now"), "\(future.stderr)")
            let alone = try daemon.cli(["explain", Self.app, "--since", "2h"])
            #expect(alone.status == 64 && alone.stderr.contains("--since needs --history"), "\(alone.stderr)")
            let empty = try daemon.cli(["explain", Self.app, Self.identifier, "--history", "--since", "0s"])
            #expect(empty.status == 0 && empty.stdout.contains("nothing ran or waited since"), "\(empty.stdout)")
            let help = try daemon.cli(["explain", "--help"])
            #expect(help.status == 0 && help.stdout.contains("--history") && help.stdout.contains("--since"))
        }
    }
}
