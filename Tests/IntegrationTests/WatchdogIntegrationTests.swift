import Foundation
import OffstageProtocol
import Testing

@Suite("Watchdogs and misbehaving apps on the real daemon", .serialized)
struct WatchdogIntegrationTests {
    @Test("BT-4: an app that ignores its expiration is killed when the budget ends; `offstage log` says which task")
    func ignoredExpirationIsKilled() throws {
        let id = "com.example.never-ending-task"
        try withDaemon { daemon in
            try daemon.install("NeverEndingTask", id: id)
            try daemon.ok("open", id)
            try daemon.waitFor(id, "active")
            let left = DaemonHarness.now()
            try daemon.ok("home")
            try daemon.waitFor(id, "notRunning", timeout: 12)
            let log = try daemon.log(id).filter { $0.at >= left }
            let watchdog = try #require(log.first { $0.kind == "watchdog" })
            #expect(watchdog.message.contains("task 'never-ends' still open after 6 s"))
            #expect(abs(watchdog.at - left - 6) < 0.3)
            #expect(daemon.output(id).contains("expiration handler called"))
            let text = try daemon.ok("log", "--app", id)
            #expect(text.contains("background time exhausted: task 'never-ends'"))
            #expect(try daemon.app(id).lastTermination?.contains("background time exhausted") == true)
        }
    }

    @Test("LC-3: a did-enter-background that never returns is killed by the watchdog")
    func hangingDidEnterBackground() throws {
        let id = "com.example.hanging-background"
        try withDaemon { daemon in
            try daemon.install("HangingBackground", id: id)
            try daemon.ok("open", id)
            try daemon.waitFor(id, "active")
            let left = DaemonHarness.now()
            try daemon.ok("home")
            try daemon.waitFor(id, "notRunning", timeout: 8)
            let watchdog = try #require(try daemon.log(id).first { $0.at >= left && $0.kind == "watchdog" })
            #expect(watchdog.message == "did-enter-background did not return within 1 s (SIGTERM)", "the kind says watchdog, once")
            #expect(abs(watchdog.at - left - 1) < 0.3)
        }
    }

    @Test("LC-3: an app that never attaches is terminated by the launch watchdog")
    func launchWatchdog() throws {
        let id = "com.example.silent"
        var settings = DaemonHarness.fastTimings
        settings["launchTimeout"] = 1.5
        try withDaemon(settings: settings) { daemon in
            // /bin/sleep never links the SDK: it never finishes launching.
            let folder = daemon.root.appendingPathComponent("bundles/silent")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: folder.path + "/sleep")
            try Data(#"{"CFBundleIdentifier": "com.example.silent", "CFBundleExecutable": "sleep", "OffstageLinux": {"Arguments": ["600"]}}"#.utf8)
                .write(to: folder.appendingPathComponent("Info.json"))
            try daemon.ok("install", folder.path)
            try daemon.ok("open", id)
            try daemon.waitFor(id, "notRunning", timeout: 6)
            #expect(try daemon.app(id).lastTermination?.contains("did-finish-launching did not return within 1.5 s") == true)
        }
    }
}
