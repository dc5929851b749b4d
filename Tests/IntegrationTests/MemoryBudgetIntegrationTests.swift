import Foundation
import Glibc
import OffstageDaemon
import OffstageProtocol
import Testing

/// Real memory pressure on the real daemon (SPEC MEM-1): an app memory budget gives the apps a small device's memory, so
/// that photo viewers decoding real photos fill it. The kernel says when the apps' usage crosses the budget's thresholds;
/// the daemon warns the running apps, then ends the suspended ones least recently used first and the one kept in memory
/// last, each after a fresh reading, until the foreground app, which keeps growing, fits.
@Suite("Real memory pressure under an app memory budget (SPEC MEM-1)")
struct MemoryBudgetIntegrationTests {
    typealias Limits = MemoryLimitIntegrationTests

    static func viewer(_ name: String) -> String { "com.example.budget-\(name)" }

    /// The daemon's settings: a budget of 320 MB, a warning from 60 % (192 MB), critical from 80 % (256 MB); a warning
    /// that stays is tolerated, so that only critical pressure ends apps.
    static var settings: [String: JSONValue] {
        var settings = DaemonHarness.fastTimings
        settings["memoryBudgetMB"] = 320
        settings["machinePressure"] = .object(["budgetWarning": 60, "budgetCritical": 80])
        settings["memory"] = .object(["warningGrace": .number(0.3), "endingInterval": .number(0.3), "warningTolerance": 3_600])
        return settings
    }

    /// The instance's group under the memory controller, which carries the budget.
    static func budgetGroup(_ daemon: DaemonHarness, mount: String) -> String {
        mount + "/offstage." + OffstageDaemonService.instanceName(for: daemon.stateDirectory)
    }

    @Test("MEM-1, SET-2, LC-5: under an app memory budget a growing foreground app pushes the suspended apps out least recently used first, the one kept in memory last, each recorded with its band, its memory and the pressure; the foreground app survives and the kernel ends nobody")
    func growingForegroundPushesSuspendedAppsOut() throws {
        guard let mount = Limits.controllerMount else {
            // Without a memory controller there is no budget: the daemon says so in `offstage status` (tested below).
            return
        }
        let (kept, older, old, newer, front) = (
            Self.viewer("kept"), Self.viewer("older"), Self.viewer("old"), Self.viewer("newer"), Self.viewer("front")
        )
        try withDaemon(settings: Self.settings) { daemon in
            for id in [kept, older, old, newer] {
                try daemon.install(
                    "PhotoViewer", id: id,
                    ["OffstageLinux": ["Arguments": ["--photo-mb", "8", "--at-launch", "4"]] as [String: Any]])
            }
            // A slideshow that needs every photo it opens: a warning frees nothing, and it stops at 29 photos (232 MiB):
            // alone it fits under critical (256 MB), beside any viewer of four photos (about 35 MB) it does not.
            try daemon.install(
                "PhotoViewer", id: front,
                ["OffstageLinux": [
                    "Arguments": ["--photo-mb", "8", "--at-launch", "1", "--open-every", "0.25", "--max-photos", "29", "--keep-on-warning"]
                ] as [String: Any]])
            try daemon.ok("settings", "--app", kept, "kept-in-memory=on")
            let status = try daemon.ok("status")
            #expect(status.contains("app memory budget of 320 MB (warning from 192 MB, critical from 256 MB)"), "\(status)")
            #expect(status.contains("usage thresholds on"), "the kernel wakes the daemon: \(status)")

            for id in [kept, older, old, newer] { try MemoryPressureIntegrationTests.openAndSuspend(daemon, id) }
            let group = Self.budgetGroup(daemon, mount: mount)
            let suspendedBytes = try Limits.number(group + "/memory.usage_in_bytes")
            try daemon.ok("open", front)
            try daemon.waitUntil("the slideshow has all its photos", timeout: 60) {
                daemon.output(front).contains("opened photo 29:")
            }
            // The last ending, if one was due, is over once a reading after it says memory is not critical.
            try daemon.waitUntil("no app is being ended", timeout: 10) {
                try daemon.apps().allSatisfy { $0.state != "terminating" }
            }
            let ended = try daemon.log().filter { $0.kind == "kill" && $0.message.hasPrefix("ended for memory") }
            let report = "suspended apps used \(suspendedBytes >> 20) MiB; ended: \(ended.map { "\($0.app ?? "?"): \($0.message)" })"
            #expect(ended.map(\.app) == [older, old, newer, kept], "\(report)")
            #expect(try daemon.app(front).state == "active", "the foreground app survives: \(report)")
            #expect(try daemon.app(front).lastTermination == nil)
            for id in [older, old, newer, kept] {
                let exit = try #require(try daemon.app(id).lastTermination)
                #expect(exit.hasPrefix("ended for memory (pressure critical): suspended, "), "\(id): \(exit)")
                let megabytes = exit.split(separator: ",").last?.split(separator: " ").first.flatMap { Int($0) }
                #expect((megabytes ?? 0) >= 32, "its four photos and more: \(id): \(exit)")
                #expect(!daemon.output(id).contains("did-receive-memory-warning"), "a suspended app hears nothing")
            }
            #expect(daemon.output(front).contains("did-receive-memory-warning: freed 0 MB"), "the app in front was warned")
            // The daemon ended them, not the kernel: the budget's limit was never reached.
            let oom = try String(contentsOfFile: group + "/memory.oom_control", encoding: .utf8)
            #expect(oom.contains("oom_kill 0"), "\(oom)")
            #expect(try Limits.number(group + "/memory.max_usage_in_bytes") < 320 << 20)
            #expect(try Limits.number(group + "/memory.limit_in_bytes") == 320 << 20)
        }
    }

    @Test("MEM-1: an app memory budget that cannot be in force (no memory controller used) is named in `offstage status` with why")
    func budgetWithoutControllerIsReported() throws {
        var settings = Self.settings
        settings["memoryController"] = .bool(false)
        try withDaemon(settings: settings) { daemon in
            let status = try daemon.ok("status")
            #expect(status.contains("memory:"), "\(status)")
            #expect(!status.contains("app memory budget of"), "\(status)")
            #expect(
                status.contains("the app memory budget is not in force: no memory controller is used (memoryController is false)"),
                "\(status)")
            let json = try JSONDecoder().decode(
                ControlInterface.StatusReply.self, from: Data(try daemon.ok("--json", "status").utf8))
            #expect(json.memoryPressure?.isEmpty == false)
        }
    }

    @Test("§11, MEM-1: watching memory pressure costs an idle daemon nothing periodic: its kernel wake-ups are armed, and no libdispatch worker thread (whose monitor wakes a process every second) runs in it, after start, a status call and a graceful SIGTERM path armed")
    func idleDaemonHasNoDispatchWorkers() throws {
        try withDaemon(settings: Self.settings) { daemon in
            let status = try daemon.ok("status")
            #expect(status.contains("read when the kernel says it may have risen"), "\(status)")
            let pid = try #require(daemon.daemon?.processIdentifier)
            // Give a late start-up step (the store's memory given back) its time.
            Thread.sleep(forTimeInterval: 1)
            let names = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").map { task in
                (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            }
            #expect(!names.contains { $0.contains("qos") }, "libdispatch workers: \(names.sorted())")
            #expect(names.contains("offstage-device") && names.contains("offstage-signal"), "\(names.sorted())")
        }
    }
}
