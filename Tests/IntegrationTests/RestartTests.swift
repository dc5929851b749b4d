import Foundation
import OffstageProtocol
import Testing

@Suite("Daemon restarts, processes started by hand, and the SIGSTOP fallback", .serialized)
struct RestartTests {
    static let finite = "com.example.finite-task"
    static let other = "com.example.other"

    @Test("LC-8: after kill -9 of the daemon, apps live on; a restarted daemon thaws, re-adopts and suspends them")
    func crashAndReadopt() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.install("FiniteTask", id: Self.finite)
        try daemon.install("ExitsOnSuspend", id: Self.other, ["UIApplicationExitsOnSuspend": true])
        try daemon.ok("settings", "multitasking=on")
        try daemon.ok("settings", "--app", Self.other, "notifications=off")
        try daemon.ok("open", Self.finite)
        try daemon.waitFor(Self.finite, "active")
        try daemon.ok("home")
        try daemon.waitFor(Self.finite, "suspended", timeout: 12)
        let pid = try #require(try daemon.app(Self.finite).pid)
        #expect(ProcessProbe.isFrozen(pid))

        daemon.crash()
        #expect(ProcessProbe.isAlive(pid), "the app outlives the daemon")
        let restarted = DaemonHarness.now()
        try daemon.start()
        // The restarted daemon finds it, thaws it, the SDK reattaches, and it is suspended again when idle.
        #expect(try daemon.app(Self.finite).pid == pid)
        try daemon.waitUntil("the app reattached") {
            try daemon.log(Self.finite).contains { $0.at >= restarted && $0.message.hasPrefix("reattached") }
        }
        try daemon.waitFor(Self.finite, "suspended", timeout: 10)
        #expect(ProcessProbe.isFrozen(pid))
        // Nothing installed or set was lost.
        #expect(Set(try daemon.apps().map(\.id)) == [Self.finite, Self.other])
        let settings = try daemon.ok("settings", "--app", Self.other)
        #expect(settings.split(separator: "\n").contains { $0.hasPrefix("notifications ") && $0.contains(" off ") })
        // And it is managed as before: opening it thaws it and brings it to the front.
        try daemon.ok("open", Self.finite)
        try daemon.waitFor(Self.finite, "active")
        #expect(try daemon.callbacks(Self.finite, since: restarted).suffix(2) == ["will-enter-foreground", "did-become-active"])
        #expect(try daemon.app(Self.finite).pid == pid)
    }

    @Test("LC-8: an app that keeps its background task across a daemon crash is re-adopted with the task")
    func crashWithOpenTask() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.finite)
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
            try daemon.ok("home")
            try daemon.waitUntil("the task is open") { try daemon.app(Self.finite).backgroundTasks == 1 }
            daemon.crash()
            try daemon.start()
            try daemon.waitUntil("the app reattached with its task") { try daemon.app(Self.finite).backgroundTasks == 1 }
            // A fresh budget, then the usual expiration and suspension.
            try daemon.waitFor(Self.finite, "suspended", timeout: 12)
            #expect(try daemon.app(Self.finite).lastTermination == nil)
        }
    }

    @Test("LC-8: a process started by hand attaches and is managed like any other")
    func startedByHand() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.finite)
            let executable = try daemon.installedBundle(Self.finite) + "/FiniteTask"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.environment = ["OFFSTAGE_SOCKET": daemon.socket, "PATH": "/usr/bin:/bin"]
            process.currentDirectoryURL = daemon.root
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            daemon.track(process.processIdentifier)
            try daemon.waitFor(Self.finite, "active")
            #expect(try daemon.app(Self.finite).pid == process.processIdentifier)
            #expect(try daemon.callbacks(Self.finite) == ["did-finish-launching", "did-become-active"])
            try daemon.ok("home")
            try daemon.waitFor(Self.finite, "suspended", timeout: 12)
            #expect(ProcessProbe.isFrozen(process.processIdentifier))
            try daemon.ok("force-quit", Self.finite)
            try daemon.waitFor(Self.finite, "notRunning")
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
        }
    }

    @Test("Freezing falls back to SIGSTOP of the process group where no cgroup is used")
    func signalStopFallback() throws {
        var settings = DaemonHarness.fastTimings
        settings["freezer"] = "signalStop"
        try withDaemon(settings: settings) { daemon in
            #expect(try daemon.ok("status").contains("freezer:       signalStop"))
            try daemon.install("FiniteTask", id: Self.finite, ["OffstageLinux": ["Arguments": ["--work", "0.5"]]])
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
            try daemon.ok("home")
            try daemon.waitFor(Self.finite, "suspended", timeout: 10)
            let pid = try #require(try daemon.app(Self.finite).pid)
            #expect(ProcessProbe.stat(pid)?.state == "T")
            let cpu = ProcessProbe.cpu(pid)
            usleep(300_000)
            #expect(ProcessProbe.cpu(pid) == cpu)
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
            #expect(ProcessProbe.stat(pid)?.state != "T")
        }
    }
}
