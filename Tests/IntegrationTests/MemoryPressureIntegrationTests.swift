import Foundation
import OffstageProtocol
import Testing

/// The answer to memory pressure on the real daemon (SPEC MEM-1), with photo viewers whose decoded photos are real
/// memory: a warning reaches a running app's delegate, which frees its cache, and not a suspended one; memory pressure
/// that stays (set by hand with `offstage device`, which drives the same path as the machine's reading) ends the apps
/// one by one in the ending order — suspended ones least recently used first, the one kept in memory after them, the
/// app in front last — each recorded with its band, its memory and the pressure.
@Suite("The answer to memory pressure on the real daemon (SPEC MEM-1)")
struct MemoryPressureIntegrationTests {
    typealias Limits = MemoryLimitIntegrationTests

    static func viewer(_ name: String) -> String { "com.example.viewer-\(name)" }

    /// A viewer with four photos of 8 MiB decoded at launch.
    static func installViewer(_ daemon: DaemonHarness, _ id: String) throws {
        try daemon.install(
            "PhotoViewer", id: id,
            ["OffstageLinux": ["MemoryLimitMB": 256, "Arguments": ["--photo-mb", "8", "--at-launch", "4"]] as [String: Any]])
    }

    static func openAndSuspend(_ daemon: DaemonHarness, _ id: String) throws {
        try daemon.ok("open", id)
        try daemon.waitFor(id, "active")
        try daemon.ok("home")
        try daemon.waitFor(id, "suspended")
    }

    @Test("MEM-1: a memory warning reaches the running app's delegate, which frees its cache, and not a suspended one; warning a suspended, stopped or unknown app is refused naming it")
    func warningReachesRunningAppsOnly() throws {
        let (back, front) = (Self.viewer("back"), Self.viewer("front"))
        try withDaemon { daemon in
            try Self.installViewer(daemon, back)
            try Self.installViewer(daemon, front)
            try Self.openAndSuspend(daemon, back)
            try daemon.ok("open", front)
            try daemon.waitFor(front, "active")

            let reply = try JSONDecoder().decode(
                ControlInterface.MemoryWarningReply.self, from: Data(try daemon.ok("--json", "memory-warning").utf8))
            #expect(reply.warned == 1)
            try daemon.waitUntil("the app in front freed its cache") {
                daemon.output(front).contains("did-receive-memory-warning: freed 24 MB, 8 MB decoded")
            }
            #expect(try daemon.ok("memory-warning", front) == "memory warning sent to \(front)\n")
            try daemon.waitUntil("the second warning ran") {
                daemon.output(front).contains("did-receive-memory-warning: freed 0 MB, 8 MB decoded")
            }
            #expect(!daemon.output(back).contains("did-receive-memory-warning"), "a suspended app hears nothing")
            #expect(try daemon.app(back).state == "suspended")

            let suspended = try daemon.cli(["memory-warning", back])
            #expect(suspended.status == 1 && suspended.stderr.contains("'\(back)' is suspended"), "\(suspended)")
            let unknown = try daemon.cli(["memory-warning", "com.example.absent"])
            #expect(unknown.status == 3 && unknown.stderr.contains("com.example.absent"), "\(unknown)")
            try daemon.ok("force-quit", front)
            try daemon.waitFor(front, "notRunning")
            let stopped = try daemon.cli(["memory-warning", front])
            #expect(stopped.status == 1 && stopped.stderr.contains("is not running"), "\(stopped)")
            #expect(try daemon.ok("memory-warning", "--help").contains("suspended app is refused"))
        }
    }

    @Test("MEM-1, SET-2, LC-5: memory pressure that stays ends the suspended apps least recently used first, the one kept in memory after them, the app in front last, each recorded with its band, memory and the pressure; auto ends the episode")
    func pressureEndsAppsInOrder() throws {
        let (kept, older, newer, front) = (Self.viewer("kept"), Self.viewer("older"), Self.viewer("newer"), Self.viewer("front"))
        var settings = DaemonHarness.fastTimings
        settings["memory"] = .object(["warningGrace": .number(0.5), "endingInterval": .number(0.3)])
        try withDaemon(settings: settings) { daemon in
            for id in [kept, older, newer, front] { try Self.installViewer(daemon, id) }
            try daemon.ok("settings", "--app", kept, "kept-in-memory=on")
            // Used in this order: the kept one longest ago.
            for id in [kept, older, newer] { try Self.openAndSuspend(daemon, id) }
            try daemon.ok("open", front)
            try daemon.waitFor(front, "active")
            let ranks = try [older, newer, kept, front].map { try daemon.app($0).memoryEndingRank }
            #expect(ranks == [1, 2, 3, 4], "the order `offstage apps` shows")

            try daemon.ok("device", "--memory-pressure", "critical")
            try daemon.waitUntil("every app is ended for memory", timeout: 20) {
                try [kept, older, newer, front].allSatisfy { try daemon.app($0).state == "notRunning" }
            }
            let ended = try daemon.log().filter { $0.kind == "kill" && $0.message.hasPrefix("ended for memory") }
            #expect(ended.map(\.app) == [older, newer, kept, front], "\(ended.map(\.message))")
            // The app in front heard the warning first and freed what it could; the suspended ones did not.
            #expect(daemon.output(front).contains("did-receive-memory-warning"))
            #expect(!daemon.output(older).contains("did-receive-memory-warning"))
            for (id, band) in [(older, "suspended"), (newer, "suspended"), (kept, "suspended"), (front, "foreground")] {
                let exit = try #require(try daemon.app(id).lastTermination)
                #expect(exit.hasPrefix("ended for memory (pressure critical): \(band)") && exit.hasSuffix("(killed by signal 9)"), "\(id): \(exit)")
                if Limits.controllerMount != nil, band == "suspended" {
                    // Its group counted its four photos and more.
                    let megabytes = exit.split(separator: ",").last?.split(separator: " ").first.flatMap { Int($0) }
                    let warnings = try daemon.log().filter { $0.message.contains("memory warning") }.map(\.message)
                    #expect((megabytes ?? 0) >= 32, "\(id): \(exit); warnings: \(warnings); \(daemon.output(id))")
                }
                #expect(!daemon.output(id).contains("will-terminate"), "no callback (LC-5)")
            }
            #expect(try daemon.log().contains { $0.kind == "device" && $0.message.hasPrefix("memory warning (memory pressure critical) for 1 running app(s)") })

            try daemon.ok("device", "--memory-pressure", "auto")
            try daemon.waitUntil("the episode is over") {
                try daemon.log().contains { $0.kind == "device" && $0.message.contains("memory pressure relieved after") }
            }
            let relieved = try #require(try daemon.log().last { $0.message.contains("memory pressure relieved after") })
            #expect(relieved.message.hasSuffix("; ended '\(older)', '\(newer)', '\(kept)', '\(front)'"), "\(relieved.message)")
            // Opened again, an app is not ended: memory is no longer short.
            try daemon.ok("open", older)
            try daemon.waitFor(older, "active")
        }
    }
}
