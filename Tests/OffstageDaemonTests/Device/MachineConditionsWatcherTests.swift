import Foundation
import Glibc
import OffstageCore
import Synchronization
import Testing

@testable import OffstageDaemon

@Suite("Watching machine conditions")
struct MachineConditionsWatcherTests {
    /// Collects the readings handed to a watcher's handler.
    final class ReadingRecorder: Sendable {
        private let readings = Mutex<[MachineReading]>([])

        /// The handler to give the watcher.
        var handler: MachineConditionsWatcher.Handler {
            { [self] reading in readings.withLock { $0.append(reading) } }
        }

        /// Every reading so far, in order.
        var all: [MachineReading] { readings.withLock { $0 } }
    }

    /// A reader of two fixture folders, so the test decides what the files say.
    static func fixtureReader(power: SysfsFixture, network: SysfsFixture) -> MachineConditionsReader {
        MachineConditionsReader(
            power: PowerSupplyReader(root: power.root),
            network: NetworkReader(root: network.root, addresses: .notRequired))
    }

    @Test("The first reading is taken at start, without calling the handler")
    func firstReading() throws {
        try SysfsFixture.with { power in
            try SysfsFixture.with { network in
                try power.supply("BAT0", type: "Battery", ["capacity": "57", "status": "Discharging"])
                try network.interface("wlan0", operstate: "up", carrier: 1, physical: true, wireless: true)
                let recorder = ReadingRecorder()
                let watcher = try MachineConditionsWatcher(
                    reader: Self.fixtureReader(power: power, network: network), onChange: recorder.handler)
                defer { watcher.shutdown() }
                #expect(watcher.current == MachineReading(batteryLevel: 57, charging: false, network: .unmetered))
                #expect(recorder.all.isEmpty)
            }
        }
    }

    @Test("Files changing alone are not noticed: the watcher waits for the kernel, it does not poll")
    func doesNotPoll() throws {
        try SysfsFixture.with { power in
            try SysfsFixture.with { network in
                try power.supply("BAT0", type: "Battery", ["capacity": "57", "status": "Discharging"])
                let recorder = ReadingRecorder()
                let watcher = try MachineConditionsWatcher(
                    reader: Self.fixtureReader(power: power, network: network), onChange: recorder.handler)
                defer { watcher.shutdown() }
                let first = watcher.current
                try power.supply("BAT0", type: "Battery", ["capacity": "58", "status": "Charging"])
                try network.interface("eth0", operstate: "up", carrier: 1, physical: true)
                Thread.sleep(forTimeInterval: 0.3)
                // A real link or address change elsewhere on this machine would legitimately cause a re-read.
                if watcher.rereadCount == 0 {
                    #expect(watcher.current == first)
                    #expect(recorder.all.isEmpty)
                }
            }
        }
    }

    @Test("An idle watcher's thread sleeps in the kernel: no wake-up without a kernel message", .timeLimit(.minutes(1)))
    func idleWatcherDoesNotWake() throws {
        let watcher = try MachineConditionsWatcher { _ in }
        defer { watcher.shutdown() }
        var thread: Int32?
        _ = ProcessFixtures.eventually {
            thread = watcher.threadID
            return thread != nil
        }
        let id = try #require(thread)
        Thread.sleep(forTimeInterval: 0.1)
        let messages = watcher.kernelMessageCount
        let before = ExitWatcherTests.contextSwitches(id)
        Thread.sleep(forTimeInterval: 1)
        let wakeUps = ExitWatcherTests.contextSwitches(id) - before
        // Any device or link event on this machine wakes the thread for real; only wake-ups without one are timers.
        #expect(
            wakeUps == 0 || watcher.kernelMessageCount > messages,
            "\(wakeUps) wake-ups in 1 s with no kernel message: something polls")
    }

    @Test("shutdown returns promptly, ends the thread, and may be called again")
    func shutdownIsPrompt() throws {
        let watcher = try MachineConditionsWatcher { _ in }
        _ = ProcessFixtures.eventually { watcher.threadID != nil }
        let thread = try #require(watcher.threadID)
        let clock = ContinuousClock()
        let elapsed = clock.measure { watcher.shutdown() }
        #expect(elapsed < .milliseconds(500), "shutdown took \(elapsed)")
        #expect(!FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)"))
        watcher.shutdown()
    }

    @Test("Kernel uevents: power-supply events are told from others, and udev's messages are not uevents")
    func ueventParsing() throws {
        // A uevent as the kernel sends it: fields ended by NUL bytes.
        func message(_ fields: [String]) -> [UInt8] { fields.flatMap { Array($0.utf8) + [0] } }
        let power = try #require(
            KernelUevent(
                message([
                    "change@/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0C0A:00/power_supply/BAT0", "ACTION=change",
                    "DEVPATH=/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0C0A:00/power_supply/BAT0",
                    "SUBSYSTEM=power_supply", "POWER_SUPPLY_NAME=BAT0", "POWER_SUPPLY_STATUS=Charging", "SEQNUM=2211",
                ])))
        #expect(power.action == "change")
        #expect(power.devicePath.hasSuffix("/power_supply/BAT0"))
        #expect(power.properties["POWER_SUPPLY_STATUS"] == "Charging")
        #expect(power.isPowerSupplyEvent)
        let usb = try #require(
            KernelUevent(message(["add@/devices/pci0000:00/usb1/1-1", "ACTION=add", "SUBSYSTEM=usb", "SEQNUM=9"])))
        #expect(!usb.isPowerSupplyEvent)
        #expect(KernelUevent(message(["libudev", "garbage"])) == nil)
        #expect(KernelUevent([UInt8]()) == nil)
    }

    @Test("Errors name the socket that could not be opened and what to do")
    func errorDescriptions() {
        let error = MachineConditionsWatcherError.cannotOpenNetlinkSocket(
            purpose: "kernel device events (NETLINK_KOBJECT_UEVENT)", errno: EPROTONOSUPPORT)
        #expect(error.description.contains("kernel device events (NETLINK_KOBJECT_UEVENT)"))
        #expect(error.description.contains("from the CLI"))
        #expect(error.errno == EPROTONOSUPPORT)
        #expect(MachineConditionsWatcherError.cannotStartThread(errno: EAGAIN).description.contains("thread"))
    }

    // MARK: - For real, in a network namespace of its own

    /// Where the probe writes its report; set only in the process `inNetworkNamespace` starts.
    static let probeVariable = "OFFSTAGE_NETWORK_PROBE_REPORT"

    /// The `ip` tool, if installed.
    static let ipTool = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// The `unshare` tool, if installed.
    static let unshareTool = ["/usr/bin/unshare", "/bin/unshare", "/usr/sbin/unshare"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Why the namespace test cannot run here, found by doing once what it needs (a network and mount namespace,
    /// sysfs mounted in it, a veth pair), all of which vanish with the throwaway namespace; nil when it can.
    static let namespaceProblem: String? = {
        guard let ip = ipTool else { return "the ip tool (iproute2) is not installed" }
        guard let unshare = unshareTool else { return "the unshare tool (util-linux) is not installed" }
        let script =
            "mount -t sysfs sysfs /sys && \(ip) link set lo up"
            + " && \(ip) link add offstage-t0 type veth peer name offstage-t1"
        let (status, errors) = run(
            unshare, ["--net", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script])
        return status == 0
            ? nil
            : "cannot create a network namespace with a veth pair (needs root, or CAP_SYS_ADMIN and CAP_NET_ADMIN, "
                + "and veth in the kernel): \(errors.trimmingCharacters(in: .whitespacesAndNewlines))"
    }()

    /// Runs a program to its end; its exit status and standard error.
    static func run(_ executable: String, _ arguments: [String]) -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        do {
            try process.run()
        } catch {
            return (-1, "\(error)")
        }
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// Re-runs this test binary, selecting `namespaceProbe` only, inside a new network and mount namespace with
    /// its own sysfs: there the watcher reads the real `/sys/class/net` with only the interfaces the probe makes,
    /// and nothing the probe does can touch this machine's network.
    @Test(
        "For real: a veth pair coming up with an address calls the handler, going down or away calls it again",
        .enabled(if: namespaceProblem == nil, Comment(rawValue: namespaceProblem ?? "")),
        .timeLimit(.minutes(1)))
    func inNetworkNamespace() throws {
        let directory = try ProcessFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("report.txt").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.unshareTool))
        let ip = try #require(Self.ipTool)
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        // Loopback up: Foundation's Process (which the probe uses to run ip) needs it, as CoreFoundation makes its
        // wake-up socket pair on 127.0.0.1.
        process.arguments = [
            "--net", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
            "mount -t sysfs sysfs /sys && \(ip) link set lo up && exec \"$0\" \"$@\"",
            testBinary, "--testing-library", "swift-testing", "--filter", "namespaceProbe",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.probeVariable] = report
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The probe's own steps wait at most seconds; a probe stuck for longer is ended rather than waited for.
        let finished = ProcessFixtures.eventually(timeout: .seconds(45)) { !process.isRunning }
        if !finished { process.terminate() }
        process.waitUntilExit()
        #expect(finished, "the probe in the namespace did not finish within 45 s")
        #expect(process.terminationStatus == 0)
        let lines =
            (try? String(contentsOfFile: report, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        #expect(
            lines == [
                "start: none",
                "idle: no wake-up without a kernel message",
                "veth pair added, down: re-read, no call",
                "both ends up, no address yet: no call",
                "address added: unmetered",
                "peer down: none",
                "peer up: unmetered",
                "a watcher stopping itself from its handler: stopped",
                "pair deleted: none",
                "calls: unmetered none unmetered none",
                "shutdown: prompt",
            ])
    }

    @Test(
        "(helper of inNetworkNamespace; runs only in the namespace that test creates)",
        .enabled(if: ProcessInfo.processInfo.environment[probeVariable] != nil))
    func namespaceProbe() throws {
        let report = try #require(ProcessInfo.processInfo.environment[Self.probeVariable])
        let ip = try #require(Self.ipTool)
        var lines: [String] = []
        defer { try? (lines.map { $0 + "\n" }.joined()).write(toFile: report, atomically: true, encoding: .utf8) }
        // The namespace disappears with this process, taking its links along; deleting them is for good measure.
        defer { _ = Self.run(ip, ["link", "del", "offstage-t0"]) }
        // Runs ip with space-separated arguments; a failure ends the probe.
        func ipCommand(_ arguments: String) throws {
            let (status, errors) = Self.run(ip, arguments.split(separator: " ").map(String.init))
            try #require(status == 0, "ip \(arguments): \(errors)")
        }
        // What sysfs (this namespace's) says of a link's state.
        func operstate(_ name: String) -> String {
            (try? String(contentsOfFile: "/sys/class/net/\(name)/operstate", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "absent"
        }

        let recorder = ReadingRecorder()
        let watcher = try MachineConditionsWatcher(onChange: recorder.handler)
        lines.append("start: \(watcher.current.network.map(\.rawValue) ?? "nil")")

        // Idle: the watcher's thread must not run at all.
        _ = ProcessFixtures.eventually { watcher.threadID != nil }
        let thread = try #require(watcher.threadID)
        Thread.sleep(forTimeInterval: 0.1)
        let messages = watcher.kernelMessageCount
        let before = ExitWatcherTests.contextSwitches(thread)
        Thread.sleep(forTimeInterval: 1)
        let wakeUps = ExitWatcherTests.contextSwitches(thread) - before
        let idleVerdict = wakeUps == 0 || watcher.kernelMessageCount > messages
        lines.append("idle: " + (idleVerdict ? "no wake-up without a kernel message" : "\(wakeUps) wake-ups"))

        // New links arrive down: the kernel says so, the watcher re-reads, and the reading stays the same.
        var rereads = watcher.rereadCount
        try ipCommand("link add offstage-t0 type veth peer name offstage-t1")
        let reread = ProcessFixtures.eventually { watcher.rereadCount > rereads }
        lines.append("veth pair added, down: " + (reread ? "re-read" : "no re-read") + ", " + Self.calls(recorder, 0))

        // Up, but only IPv6 link-local addresses: no way off the link yet.
        rereads = watcher.rereadCount
        try ipCommand("link set offstage-t0 up")
        try ipCommand("link set offstage-t1 up")
        _ = ProcessFixtures.eventually { operstate("offstage-t0") == "up" && operstate("offstage-t1") == "up" }
        _ = ProcessFixtures.eventually { watcher.rereadCount > rereads }
        Thread.sleep(forTimeInterval: 0.3)
        lines.append("both ends up, no address yet: " + Self.calls(recorder, 0))

        try ipCommand("addr add 10.213.0.1/24 dev offstage-t0")
        lines.append("address added: " + Self.awaitCall(recorder, 1))

        try ipCommand("link set offstage-t1 down")
        lines.append("peer down: " + Self.awaitCall(recorder, 2))

        // A second watcher stops itself from its handler at its first call: shutdown must not wait for itself.
        let selfStopping = Mutex<MachineConditionsWatcher?>(nil)
        let second = try MachineConditionsWatcher { _ in selfStopping.withLock { $0 }?.shutdown() }
        selfStopping.withLock { $0 = second }
        _ = ProcessFixtures.eventually { second.threadID != nil }
        let secondThread = try #require(second.threadID)

        try ipCommand("link set offstage-t1 up")
        lines.append("peer up: " + Self.awaitCall(recorder, 3))
        let stopped = ProcessFixtures.eventually {
            !FileManager.default.fileExists(atPath: "/proc/self/task/\(secondThread)")
        }
        lines.append("a watcher stopping itself from its handler: " + (stopped ? "stopped" : "still running"))
        second.shutdown()
        selfStopping.withLock { $0 = nil }

        try ipCommand("link del offstage-t0")
        lines.append("pair deleted: " + Self.awaitCall(recorder, 4))
        lines.append("calls: " + recorder.all.map { $0.network.map(\.rawValue) ?? "nil" }.joined(separator: " "))

        let clock = ContinuousClock()
        let elapsed = clock.measure { watcher.shutdown() }
        let gone = !FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)")
        lines.append("shutdown: " + (elapsed < .milliseconds(500) && gone ? "prompt" : "took \(elapsed), gone \(gone)"))
    }

    /// "no call" when the recorder has exactly `count` readings, else what it has.
    static func calls(_ recorder: ReadingRecorder, _ count: Int) -> String {
        let all = recorder.all
        return all.count == count ? "no call" : "\(all.count - count) unexpected calls: \(all)"
    }

    /// Waits for the handler's call number `count` and names its network, or says what happened instead.
    static func awaitCall(_ recorder: ReadingRecorder, _ count: Int) -> String {
        _ = ProcessFixtures.eventually { recorder.all.count >= count }
        let all = recorder.all
        guard all.count == count, let last = all.last else { return "\(all.count) calls instead of \(count): \(all)" }
        return last.network.map(\.rawValue) ?? "nil"
    }
}
