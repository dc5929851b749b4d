import Foundation
import OffstageProtocol
import Testing

/// SCENARIOS.md S1–S5 against the real daemon and real app processes, with timings shortened by five
/// (budget 6 s, warning 1 s, suspension 0.2 s, did-enter-background and will-terminate 1 s).
@Suite("Scenarios S1–S5 on the real daemon", .serialized)
struct ScenarioTests {
    static let finite = "com.example.finite-task"

    @Test("S1 (LC-2, BT-1, BT-2, LC-4): work finishes in the background, then the app is suspended and really frozen")
    func s1FinishingWorkAfterLeaving() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.finite, ["OffstageLinux": ["Arguments": ["--work", "1.6"]]])
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
            let pid = try #require(try daemon.app(Self.finite).pid)
            let left = DaemonHarness.now()
            try daemon.ok("home")
            try daemon.waitUntil("the background task began") { try daemon.app(Self.finite).backgroundTasks == 1 }
            // Running in the background while the work goes on: its CPU time advances.
            #expect(try daemon.app(Self.finite).state == "background")
            let cpuBefore = ProcessProbe.cpu(pid)
            usleep(500_000)
            #expect(ProcessProbe.cpu(pid) > cpuBefore, "the background work uses CPU")
            #expect(try daemon.app(Self.finite).state == "background")
            try daemon.waitFor(Self.finite, "suspended", timeout: 10)
            #expect(try daemon.callbacks(Self.finite, since: left) == ["will-resign-active", "did-enter-background"])
            let ended = try #require(try daemon.time(Self.finite, since: left) { $0.kind == "taskEnd" })
            let suspended = try #require(try daemon.time(Self.finite, since: left) { $0.state == "suspended" })
            #expect(ended - left > 1.4 && ended - left < 3.5, "the task ended after the 1.6 s of work")
            #expect(abs(suspended - ended - 0.2) < 0.15, "suspended 0.2 s after the task ended")
            // Really frozen: the freezer says so and the CPU time stands still.
            #expect(ProcessProbe.isFrozen(pid), "\((try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)) ?? "")")
            let frozenCPU = ProcessProbe.cpu(pid)
            usleep(400_000)
            #expect(ProcessProbe.cpu(pid) == frozenCPU)
            #expect(daemon.output(Self.finite).contains("background work done"))
        }
    }

    @Test("S2 (BT-3, BT-4): time remaining falls from the budget, expiration once near the end, suspended, not killed")
    func s2RunningUntilTimeIsUp() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.finite)
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
            try daemon.waitUntil("the app reports in the foreground") {
                daemon.output(Self.finite).contains("backgroundTimeRemaining=max")
            }
            #expect(try daemon.app(Self.finite).backgroundTimeRemaining == nil)
            let left = DaemonHarness.now()
            try daemon.ok("home")
            usleep(1_100_000)
            let remaining = try #require(try daemon.app(Self.finite).backgroundTimeRemaining)
            #expect(remaining > 4.5 && remaining < 5.3, "about 6 − 1 s left")
            try daemon.waitFor(Self.finite, "suspended", timeout: 12)
            let log = try daemon.log(Self.finite).filter { $0.at >= left }
            let expirations = log.filter { $0.kind == "callback" && $0.message == "background-tasks-expiring" }
            #expect(expirations.count == 1, "\(log.map { "\($0.at - left) \($0.kind) \($0.message)" })")
            let expiredAt = try #require(expirations.first?.at)
            #expect(abs(expiredAt - left - 5) < 0.3, "expiration handler 1 s before the 6 s budget ends")
            let suspendedAt = try #require(log.first { $0.state == "suspended" }?.at)
            #expect(abs(suspendedAt - expiredAt - 0.2) < 0.2)
            #expect(!log.contains { $0.kind == "kill" || $0.kind == "watchdog" })
            // The app printed a falling remaining time while it ran in the background.
            let printed = daemon.output(Self.finite).split(separator: "\n").compactMap { line -> Double? in
                guard line.contains("state=background"), let range = line.range(of: "backgroundTimeRemaining=") else { return nil }
                return Double(line[range.upperBound...].prefix { $0 != " " })
            }
            #expect(printed.count >= 3)
            #expect(zip(printed, printed.dropFirst()).allSatisfy { $0 > $1 }, "falls by about 1 per second: \(printed)")
            #expect((printed.first ?? 0) <= 6 && (printed.first ?? 0) >= 4)
            let index = try #require(lastFibonacciIndex(daemon.output(Self.finite)))
            let reopened = DaemonHarness.now()
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
            #expect(try daemon.callbacks(Self.finite, since: reopened) == ["will-enter-foreground", "did-become-active"])
            try daemon.waitUntil("the computation goes on") {
                (lastFibonacciIndex(daemon.output(Self.finite)) ?? 0) != index
            }
        }
    }

    @Test("S3 (BT-5): back in the foreground before the end: no expiration, no termination, no deadline")
    func s3ComingBackWhileTaskOpen() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.finite, ["OffstageLinux": ["Arguments": ["--end-on-foreground"]]])
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
            let left = DaemonHarness.now()
            try daemon.ok("home")
            usleep(2_000_000)
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
            try daemon.waitUntil("the task ended") { try daemon.app(Self.finite).backgroundTasks == 0 }
            usleep(6_000_000)  // past where the budget would have ended
            let log = try daemon.log(Self.finite).filter { $0.at >= left }
            let kinds = Set(log.map(\.kind))
            let callbacks = log.filter { $0.kind == "callback" }.map(\.message)
            #expect(!callbacks.contains("background-tasks-expiring"))
            #expect(kinds.isDisjoint(with: ["kill", "watchdog", "exit"]))
            let expected = ["will-resign-active", "did-enter-background", "will-enter-foreground", "did-become-active"]
            #expect(callbacks == expected)
            let app = try daemon.app(Self.finite)
            #expect(app.state == "active")
            #expect(app.backgroundTimeRemaining == nil)
            let lastLine = daemon.output(Self.finite).split(separator: "\n").last.map(String.init) ?? ""
            #expect(lastLine.contains("backgroundTimeRemaining=max"))
        }
    }

    @Test("S4 (LC-2): an interruption dismissed, then one accepted")
    func s4Interruptions() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.finite)
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
            var since = DaemonHarness.now()
            try daemon.ok("interrupt")
            try daemon.waitFor(Self.finite, "inactive")
            try daemon.ok("interrupt", "--dismiss")
            try daemon.waitFor(Self.finite, "active")
            usleep(300_000)
            #expect(try daemon.callbacks(Self.finite, since: since) == ["will-resign-active", "did-become-active"])
            since = DaemonHarness.now()
            try daemon.ok("interrupt", "--accept")
            try daemon.waitUntil("the app is in the background") { try daemon.app(Self.finite).state != "active" }
            #expect(try daemon.callbacks(Self.finite, since: since).prefix(2) == ["will-resign-active", "did-enter-background"])
            // It holds a task (the tutorial begins one), so it is suspended after the task expires.
            try daemon.waitFor(Self.finite, "suspended", timeout: 10)
        }
    }

    @Test("S5 (LC-7): an app that exits on suspend gets will-terminate, exits, and opens as a fresh launch")
    func s5ExitsOnSuspend() throws {
        let id = "com.example.exits-on-suspend"
        try withDaemon { daemon in
            try daemon.install("ExitsOnSuspend", id: id, ["UIApplicationExitsOnSuspend": true])
            try daemon.ok("open", id)
            try daemon.waitFor(id, "active")
            let left = DaemonHarness.now()
            try daemon.ok("home")
            try daemon.waitFor(id, "notRunning", timeout: 5)
            #expect(try daemon.callbacks(id, since: left) == ["will-resign-active", "will-terminate"])
            let app = try daemon.app(id)
            #expect(app.lastTermination?.contains("exits on suspend") == true)
            #expect(app.lastTermination?.contains("exited with status 0") == true)
            let exited = try #require(try daemon.time(id, since: left) { $0.kind == "exit" })
            #expect(exited - left < 1, "exits within the 1 s will-terminate limit")
            let reopened = DaemonHarness.now()
            try daemon.ok("open", id)
            try daemon.waitFor(id, "active")
            #expect(try daemon.callbacks(id, since: reopened) == ["did-finish-launching", "did-become-active"])
            #expect(daemon.output(id).contains("launch number 2"), "state saved in will-terminate survives")
        }
    }

    @Test("S5 (LC-7, LC-3): an exits-on-suspend app that hangs in will-terminate is killed at the limit, reason recorded")
    func s5HangingWillTerminateIsKilled() throws {
        let id = "com.example.exits-on-suspend"
        try withDaemon { daemon in
            try daemon.install(
                "ExitsOnSuspend", id: id,
                ["UIApplicationExitsOnSuspend": true, "OffstageLinux": ["Arguments": ["--hang-on-terminate"]]])
            try daemon.ok("open", id)
            try daemon.waitFor(id, "active")
            let left = DaemonHarness.now()
            try daemon.ok("home")
            try daemon.waitFor(id, "notRunning", timeout: 5)
            let log = try daemon.log(id).filter { $0.at >= left }
            let watchdog = try #require(log.first { $0.kind == "watchdog" })
            #expect(watchdog.message.contains("did not exit within 1 s"))
            #expect(abs(watchdog.at - left - 1) < 0.3)
            #expect(try daemon.app(id).lastTermination?.contains("killed by signal") == true)
        }
    }
}

func lastFibonacciIndex(_ output: String) -> Int? {
    output.split(separator: "\n").reversed().lazy.compactMap { line -> Int? in
        guard let start = line.range(of: "fib(")?.upperBound else { return nil }
        return Int(line[start...].prefix { $0.isNumber })
    }.first
}
