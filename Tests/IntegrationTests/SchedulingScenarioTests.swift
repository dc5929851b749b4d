import Foundation
import OffstageProtocol
import Testing

/// SCENARIOS.md S6–S9 and scheduled work (SPEC SCH-1..10) against the real daemon, the real example apps and the
/// built CLI. Task runtimes are shortened (refresh 6 s, processing 3 s, grace 1 s), the rest as in S1–S5.
@Suite("Scheduled work on the real daemon (S6–S9, SCH)", .serialized)
struct SchedulingScenarioTests {
    static let timings = DaemonHarness.fastTimings.merging([
        "refreshRuntime": 6, "processingRuntime": 3, "taskExpirationGrace": 1,
    ]) { _, new in new }
    static let news = "com.example.news"
    static let refresh = "com.example.refresh-app"
    static let processing = "com.example.processing-app"
    static let refreshID = "com.example.refresh"
    static let processingID = "com.example.processing"

    static func installRefresh(_ daemon: DaemonHarness, _ arguments: [String] = []) throws {
        try daemon.install(
            "RefreshApp", id: refresh,
            [
                "UIBackgroundModes": ["fetch"], "BGTaskSchedulerPermittedIdentifiers": [refreshID],
                "OffstageLinux": ["Arguments": arguments],
            ])
    }

    func tasks(_ daemon: DaemonHarness, _ app: String) throws -> [ControlInterface.TaskMessage] {
        try JSONDecoder().decode([ControlInterface.TaskMessage].self, from: Data(try daemon.ok("--json", "tasks", app).utf8))
    }

    func explain(_ daemon: DaemonHarness, _ app: String, _ identifier: String) throws -> ControlInterface.TaskMessage {
        let reply = try JSONDecoder().decode(
            ControlInterface.ExplainReply.self, from: Data(try daemon.ok("--json", "explain", app, identifier).utf8))
        return try #require(reply.tasks.first)
    }

    @Test("S6 (SCH-4, LC-2): the simulated fetch launches the news app in the background for fetch, then it is suspended; an app whose interval is never is not woken, and explain says why")
    func s6BackgroundFetch() throws {
        try withDaemon(settings: Self.timings) { daemon in
            try daemon.install("NewsApp", id: Self.news, ["UIBackgroundModes": ["fetch"]])
            let start = DaemonHarness.now()
            try daemon.ok("fetch", Self.news)
            try daemon.waitUntil("the fetch completed") { try daemon.log(Self.news).contains { $0.kind == "taskDone" } }
            try daemon.waitFor(Self.news, "suspended")
            #expect(try daemon.callbacks(Self.news, since: start) == ["did-finish-launching", "perform-fetch"])
            let launched = try #require(try daemon.log(Self.news).first { $0.kind == "launch" }?.message)
            #expect(launched.contains("(fetch)"))
            let done = try #require(try daemon.log(Self.news).last { $0.kind == "taskDone" }?.message)
            #expect(done.contains("newData") || done.contains("noData"), "\(done)")
            #expect(try daemon.log(Self.news).contains { $0.kind == "taskRun" && $0.message.contains("forced") })

            // An app that declares fetch but never sets an interval.
            try daemon.install("FiniteTask", id: "com.example.never", ["UIBackgroundModes": ["fetch"]])
            let never = try explain(daemon, "com.example.never", "fetch")
            #expect(never.holds.map(\.controller) == ["time-window"])
            #expect(never.summary.contains("'never'") && never.summary.contains("setMinimumBackgroundFetchInterval"))
            let text = try daemon.ok("explain", "com.example.never")
            #expect(text.contains("waiting [time-window]"))
            #expect(try daemon.app("com.example.never").state == "notRunning")
        }
    }

    @Test("S7 (SCH-1..3, SCH-9): register, submit, tasks shows the plan; a resubmit replaces; run-task runs it in the background, it completes, resubmits and is suspended")
    func s7AppRefresh() throws {
        try withDaemon(settings: Self.timings) { daemon in
            try Self.installRefresh(daemon)
            try daemon.ok("open", Self.refresh)
            try daemon.waitUntil("the app submitted its request") { daemon.output(Self.refresh).contains("submitted refresh request") }
            #expect(daemon.output(Self.refresh).contains("register com.example.refresh: true"))
            #expect(daemon.output(Self.refresh).contains("register com.example.unlisted: false"), "SCH-1: not listed")
            let pending = try #require(try tasks(daemon, Self.refresh).first)
            #expect(pending.identifier == Self.refreshID && pending.state == "pending")
            let ahead = try #require(pending.earliestBegin) - DaemonHarness.now()
            #expect(ahead > 50 && ahead <= 60)
            #expect(pending.holds.map(\.controller).contains("time-window"), "\(pending.summary)")
            #expect(try daemon.ok("tasks", Self.refresh).contains("earliest begin date"))

            // A fresh launch submits again: the pending request is replaced, not doubled.
            try daemon.ok("force-quit", Self.refresh)
            try daemon.waitFor(Self.refresh, "notRunning")
            try daemon.ok("open", Self.refresh)
            try daemon.waitUntil("the request was replaced") {
                try daemon.log(Self.refresh).contains { $0.kind == "schedule" && $0.message.hasPrefix("replaced") }
            }
            #expect(try tasks(daemon, Self.refresh).count == 1)

            try daemon.ok("home")
            try daemon.waitFor(Self.refresh, "suspended")
            let before = DaemonHarness.now()
            try daemon.ok("run-task", Self.refresh, Self.refreshID)
            try daemon.waitUntil("the task completed") {
                try daemon.log(Self.refresh).contains { $0.kind == "taskDone" && $0.at >= before }
            }
            try daemon.waitFor(Self.refresh, "suspended")
            #expect(try daemon.callbacks(Self.refresh, since: before) == ["run-task"], "resumed, not launched; no did-become-active")
            #expect(daemon.output(Self.refresh).contains("completing com.example.refresh with success"))
            #expect(try daemon.log(Self.refresh).last { $0.kind == "taskDone" }?.message.contains("newData") == true)
            #expect(try tasks(daemon, Self.refresh).map(\.state) == ["pending"], "the handler resubmitted")
        }
    }

    @Test("S7 (SCH-9): expire-task calls a running task's expiration handler; it completes with failure")
    func s7ExpireTask() throws {
        try withDaemon(settings: Self.timings) { daemon in
            try Self.installRefresh(daemon, ["--refresh-seconds", "20"])
            try daemon.ok("open", Self.refresh)
            try daemon.waitUntil("the app submitted its request") { daemon.output(Self.refresh).contains("submitted refresh request") }
            try daemon.ok("home")
            try daemon.waitFor(Self.refresh, "suspended")
            let notRunning = try daemon.cli(["expire-task", Self.refresh, Self.refreshID])
            #expect(notRunning.status == 5 && notRunning.stderr.contains("run-task"), "\(notRunning.stderr)")
            try daemon.ok("run-task", Self.refresh, Self.refreshID)
            try daemon.waitUntil("the task runs") { try tasks(daemon, Self.refresh).contains { $0.state == "running" } }
            try daemon.ok("expire-task", Self.refresh, Self.refreshID)
            try daemon.waitUntil("the expiration handler ran") { daemon.output(Self.refresh).contains("expiration handler") }
            try daemon.waitUntil("the task completed") {
                try daemon.log(Self.refresh).contains { $0.kind == "taskDone" && $0.message.contains("failed") }
            }
            try daemon.waitFor(Self.refresh, "suspended")
        }
    }

    @Test("S8 (SCH-2, SCH-6, SCH-8): processing that needs power waits on battery, named by explain; charging and idle run it; at the end of its runtime it checkpoints")
    func s8ProcessingNeedsPower() throws {
        try withDaemon(settings: Self.timings) { daemon in
            try daemon.install(
                "ProcessingApp", id: Self.processing,
                [
                    "UIBackgroundModes": ["processing"], "BGTaskSchedulerPermittedIdentifiers": [Self.processingID],
                    "OffstageLinux": ["Arguments": ["--items", "1000", "--step-ms", "50"]],
                ])
            try daemon.ok("device", "--charging", "off", "--idle", "off")
            try daemon.ok("open", Self.processing)
            try daemon.waitUntil("the app submitted") { try !tasks(daemon, Self.processing).isEmpty }
            try daemon.ok("home")
            try daemon.waitFor(Self.processing, "suspended")
            let waiting = try explain(daemon, Self.processing, Self.processingID)
            #expect(waiting.holds.map(\.controller).contains("power"), "\(waiting.summary)")
            #expect(try daemon.ok("explain", Self.processing).contains("requires external power"))
            try daemon.ok("device", "--charging", "on", "--idle", "on")
            try daemon.waitUntil("the expiration handler checkpointed", timeout: 15) {
                daemon.output(Self.processing).contains("checkpointed at")
            }
            try daemon.waitFor(Self.processing, "suspended", timeout: 10)
            let done = try #require(try daemon.log(Self.processing).last { $0.kind == "taskDone" }?.message)
            #expect(done.contains("failed"), "\(done)")
        }
    }

    @Test("S9 (SET-2, SCH-6): background data off on a metered network holds the refresh, as explain says; unmetered lets it run")
    func s9BackgroundDataRestricted() throws {
        try withDaemon(settings: Self.timings) { daemon in
            try Self.installRefresh(daemon, ["--earliest-seconds", "0"])
            try daemon.ok("settings", "--app", Self.refresh, "background-data=off")
            try daemon.ok("device", "--network", "metered")
            try daemon.ok("open", Self.refresh)
            try daemon.waitUntil("the app submitted") { try !tasks(daemon, Self.refresh).isEmpty }
            try daemon.ok("home")
            try daemon.waitFor(Self.refresh, "suspended")
            let waiting = try explain(daemon, Self.refresh, Self.refreshID)
            #expect(waiting.holds.map(\.controller) == ["data"])
            #expect(waiting.summary.contains("background data restricted on a metered network"))
            #expect(try !daemon.log(Self.refresh).contains { $0.kind == "taskRun" })
            try daemon.ok("device", "--network", "unmetered")
            try daemon.waitUntil("the refresh ran") { try daemon.log(Self.refresh).contains { $0.kind == "taskDone" } }
        }
    }

    @Test("SCH-10, SCH-3: pending requests survive a kill -9 and a restart; a not-running app is launched into the background by a forced run and suspended again")
    func persistenceAndLaunchIntoBackground() throws {
        try withDaemon(settings: Self.timings) { daemon in
            try Self.installRefresh(daemon, ["--earliest-seconds", "600"])
            try daemon.ok("open", Self.refresh)
            try daemon.waitUntil("the app submitted") { try !tasks(daemon, Self.refresh).isEmpty }
            let submitted = try #require(try tasks(daemon, Self.refresh).first)
            try daemon.ok("home")
            try daemon.waitFor(Self.refresh, "suspended")
            daemon.crash()
            try daemon.start()
            let afterCrash = try #require(try tasks(daemon, Self.refresh).first)
            #expect(afterCrash.identifier == submitted.identifier && afterCrash.earliestBegin == submitted.earliestBegin)
            // A graceful stop ends the app; the request stays.
            daemon.stop()
            try daemon.start()
            #expect(try daemon.app(Self.refresh).state == "notRunning")
            #expect(try tasks(daemon, Self.refresh).count == 1)
            let before = DaemonHarness.now()
            try daemon.ok("run-task", Self.refresh, Self.refreshID)
            try daemon.waitUntil("the task completed") {
                try daemon.log(Self.refresh).contains { $0.kind == "taskDone" && $0.at >= before }
            }
            try daemon.waitFor(Self.refresh, "suspended")
            #expect(try daemon.callbacks(Self.refresh, since: before) == ["did-finish-launching", "run-task"])
            #expect(try daemon.log(Self.refresh).contains { $0.kind == "launch" && $0.at >= before && $0.message.contains("(refresh)") })
        }
    }

    @Test("SCH-10: after a restart with nothing running, pending work is scheduled again without any input")
    func restartSchedulesPendingWork() throws {
        try withDaemon(settings: Self.timings) { daemon in
            try Self.installRefresh(daemon, ["--earliest-seconds", "4"])
            try daemon.ok("open", Self.refresh)
            try daemon.waitUntil("the app submitted") { try !tasks(daemon, Self.refresh).isEmpty }
            try daemon.ok("home")
            daemon.stop()  // ends the app; the request stays
            try daemon.start()
            let restarted = DaemonHarness.now()
            try daemon.waitUntil("the refresh ran on its own", timeout: 15) {
                try daemon.log(Self.refresh).contains { $0.kind == "taskDone" && $0.at >= restarted }
            }
            #expect(try daemon.log(Self.refresh).contains { $0.kind == "launch" && $0.at >= restarted && $0.message.contains("(refresh)") })
        }
    }

    @Test("Bad input (SCH-2): malformed requests from an app and bad CLI arguments get a clear error and change nothing")
    func badInput() throws {
        try withDaemon(settings: Self.timings) { daemon in
            try Self.installRefresh(daemon, ["--earliest-seconds", "600"])
            try daemon.ok("open", Self.refresh)
            try daemon.waitUntil("the app submitted") { try !tasks(daemon, Self.refresh).isEmpty }
            let before = try daemon.ok("--json", "tasks")
            let replies = try daemon.callAsApp(
                Self.refresh,
                [
                    ("io.offstage.App.SubmitTask", ["request": ["identifier": Self.refreshID, "kind": "someday"]]),
                    ("io.offstage.App.SubmitTask", ["request": ["identifier": Self.refreshID, "kind": "refresh", "earliestBegin": 1e300]]),
                    ("io.offstage.App.SubmitTask", ["request": ["identifier": "com.example.unlisted", "kind": "refresh"]]),
                    ("io.offstage.App.SubmitTask", ["request": ["identifier": Self.refreshID, "kind": "refresh", "earliestBegin": DaemonHarness.now() + 400 * 86_400]]),
                    ("io.offstage.App.SetFetchInterval", ["interval": "sometimes"]),
                    ("io.offstage.App.CompleteTask", ["run": 987_654, "result": "newData"]),
                    ("io.offstage.App.CompleteTask", ["run": 1, "result": "maybe"]),
                ])
            let errors = replies.map { $0["error"] as? String }
            #expect(errors == [
                "org.varlink.service.InvalidParameter", "org.varlink.service.InvalidParameter",
                "io.offstage.App.NotPermitted", "io.offstage.App.InvalidArgument", "org.varlink.service.InvalidParameter",
                "io.offstage.App.NoSuchTask", "org.varlink.service.InvalidParameter",
            ], "\(replies)")
            #expect(try daemon.ok("--json", "tasks") == before, "nothing changed")

            let unknownApp = try daemon.cli(["run-task", "com.example.nope", Self.refreshID])
            #expect(unknownApp.status == 3 && unknownApp.stderr.contains("offstage install"))
            let unlisted = try daemon.cli(["explain", Self.refresh, "com.example.unlisted"])
            #expect(unlisted.status == 6 && unlisted.stderr.contains("BGTaskSchedulerPermittedIdentifiers"))
            let badNetwork = try daemon.cli(["device", "--network", "wifi"])
            #expect(badNetwork.status == 64)
            let badBattery = try daemon.cli(["device", "--battery", "140"])
            #expect(badBattery.status == 64 && badBattery.stderr.contains("0 to 100"))
            #expect(try daemon.ok("--json", "tasks") == before, "nothing changed")
        }
    }
}
