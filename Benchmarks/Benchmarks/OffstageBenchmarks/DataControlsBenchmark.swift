import Benchmark
import Foundation
import OffstageBenchKit
@_spi(Benchmarks) import OffstageDaemon
import OffstageProtocol

/// The data controls' figures (SPEC SET-2, SET-3; §11's lifecycle targets), each against a baseline in the same run:
///
/// 1. Loopback download throughput of curl inside an app's cgroup, whose sockets the daemon's nftables rules match
///    and count, against the same curl in a cgroup of the benchmark's own that no rule matches (target ≥ 95 %); and
///    the bytes the daemon counted against the bytes curl downloaded.
/// 2. A setting change → the rule in force: from the `SetSettings` call (background data off or on, on a metered
///    network, for an app running in the background) to the moment a process in the app's cgroup that connects in a
///    loop sees its connections refused (or accepted again); and from `Home` to refused. Against the same rule
///    added and deleted by the benchmark itself through libnftables, the call the daemon makes.
/// 3. home → frozen and open → did-become-active of an app with background data off on a metered network (a block
///    at every home, a lift before every did-become-active) against the same app on a daemon with the data controls
///    off, the two daemons taken in turns.
enum DataControlsBenchmark {
    static let rounds = 5
    static let settingTrips = 20
    static let lifecycleBlocks = 6
    static let cyclesPerBlock = 50
    static let gapMilliseconds: UInt64 = 15

    static func run(_ benchmark: Benchmark) throws {
        let nftables: NftablesBenchmarkAccess
        do {
            nftables = try NftablesBenchmarkAccess()
        } catch {
            throw BenchError("libnftables cannot be opened (\(error)): install the Debian package nftables and run as root")
        }
        guard let mount = ProcReader.cgroupMounts().unified, NftablesBenchmarkAccess.relativeCgroup(mount) != nil else {
            throw BenchError("no cgroup2 hierarchy under /sys/fs/cgroup: the data controls cannot be enforced here")
        }
        let nginx = try NginxFixture()
        defer { nginx.stop() }
        try TransferThroughputBenchmark.writeServedFile(nginx.root + "/big.bin")
        let own = try OwnGroup(mount: mount)
        defer { own.remove() }

        let daemon = try DaemonFixture(settings: ["suspendDelay": 60])
        defer { daemon.tearDown() }
        try daemon.start()
        let status = try daemon.status()
        guard status.dataControls == "enforced" else {
            throw BenchError("the daemon's data controls are \(status.dataControls): \(status.dataControlsDetail)")
        }
        let id = "bench.datacontrols"
        try daemon.install(try daemon.probeBundle(id: id, arguments: ["--lifecycle", "--report", daemon.root + "/unused.sock"]))
        try daemon.open(id)
        guard let appPid = try daemon.waitFor(id, "active").pid, let cgroup = ProcReader.unifiedCgroup(appPid) else {
            throw BenchError("\(id) has no pid or no cgroup2 group")
        }
        let appGroup = mount + cgroup

        try throughput(daemon, id: id, nginx: nginx, appGroup: appGroup, ownGroup: own.path, benchmark)
        try ruleLatency(daemon, id: id, nginx: nginx, appGroup: appGroup, own: own, nftables: nftables, benchmark)
        daemon.tearDown()
        try lifecycle(benchmark)
    }

    // MARK: 1. Throughput

    static func throughput(
        _ daemon: DaemonFixture, id: String, nginx: NginxFixture, appGroup: String, ownGroup: String, _ benchmark: Benchmark
    ) throws {
        guard let curl = ["/usr/bin/curl", "/bin/curl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchError("curl is not installed; install the Debian package curl (scripts/ensure-packages does)")
        }
        let url = nginx.url("/big.bin")
        func download(in group: String) throws -> Double {
            let start = MonotonicClock.now()
            let process = try ChildProcess(
                "/bin/sh", ["-c", "echo $$ > '\(group)/cgroup.procs' && exec \(curl) -s -S -f -o /dev/null \(url)"],
                outputPath: "/dev/null")
            var status: Int32 = 0
            while waitpid(process.pid, &status, 0) < 0, errno == EINTR {}
            guard status == 0 else { throw BenchError("curl in \(group) failed: wait status \(status)") }
            return Double(TransferThroughputBenchmark.fileBytes) / (Double(MonotonicClock.now() - start) / 1e9)
        }
        let before = try received(daemon, id)
        // Warm-up, not measured: the served file into the page cache, one download of each.
        _ = try download(in: appGroup)
        _ = try download(in: ownGroup)
        var withRules: [Double] = []
        var without: [Double] = []
        for round in 0..<rounds {
            if round % 2 == 0 {
                withRules.append(try download(in: appGroup))
                without.append(try download(in: ownGroup))
            } else {
                without.append(try download(in: ownGroup))
                withRules.append(try download(in: appGroup))
            }
        }
        let counted = try received(daemon, id) - before
        let downloaded = Int64(rounds + 1) * TransferThroughputBenchmark.fileBytes
        let ruled = withRules.sorted()[rounds / 2]
        let bare = without.sorted()[rounds / 2]
        benchmark.measurement(Metrics.dataControlsThroughput, Int(ruled / 1e6))
        benchmark.measurement(Metrics.dataControlsBareThroughput, Int(bare / 1e6))
        Report.heading("Data controls: loopback download in an app's cgroup with its rules, \(rounds) rounds of 1 GiB")
        Report.line(String(format: "curl in the app's cgroup (its rules count every packet): median %.0f MB/s", ruled / 1e6))
        Report.line(String(format: "baseline: curl in a cgroup no rule matches: median %.0f MB/s", bare / 1e6))
        Report.line("ratio: \(Report.ratio(ruled, bare)) (target ≥ 0.95×: \(Report.verdict(ruled >= 0.95 * bare)))")
        Report.line(
            "bytes the daemon counted to the app: \(counted) for \(downloaded) bytes of body downloaded "
                + String(format: "(%+.2f %%: the packets' own headers)", Double(counted - downloaded) / Double(downloaded) * 100))
    }

    /// The bytes the app's sockets received, as `offstage usage` tells.
    static func received(_ daemon: DaemonFixture, _ id: String) throws -> Int64 {
        let reply = try daemon.call(
            ControlInterface.Method.usage, ControlInterface.UsageParameters(app: id), as: ControlInterface.UsageReply.self)
        return reply.rows.map(\.received).reduce(0, +)
    }

    // MARK: 2. Setting → rule in force

    static func ruleLatency(
        _ daemon: DaemonFixture, id: String, nginx: NginxFixture, appGroup: String, own: OwnGroup,
        nftables: NftablesBenchmarkAccess, _ benchmark: Benchmark
    ) throws {
        _ = try daemon.call(
            ControlInterface.Method.setDevice, ControlInterface.SetDeviceParameters(network: "metered"),
            as: ControlInterface.DeviceReply.self)
        try setBackgroundData(daemon, id, on: false)
        let app = try ConnectLoop(daemon, in: appGroup, port: nginx.port, name: "app")
        defer { app.stop() }
        try app.waitFor(refused: false, timeoutSeconds: 10)

        // The app leaves the front: blocked.
        let homeStart = MonotonicClock.now()
        try daemon.home()
        let homeBlocked = try app.waitFor(refused: true, timeoutSeconds: 5) - homeStart
        var blocks: [UInt64] = []
        var lifts: [UInt64] = []
        for _ in 0..<settingTrips {
            MonotonicClock.sleep(milliseconds: gapMilliseconds)
            var start = MonotonicClock.now()
            try setBackgroundData(daemon, id, on: true)
            lifts.append(try app.waitFor(refused: false, timeoutSeconds: 5) - start)
            MonotonicClock.sleep(milliseconds: gapMilliseconds)
            start = MonotonicClock.now()
            try setBackgroundData(daemon, id, on: false)
            blocks.append(try app.waitFor(refused: true, timeoutSeconds: 5) - start)
        }
        guard try daemon.app(id).state == "background" else {
            throw BenchError("\(id) left the background during the trips: its cgroup may have been frozen")
        }

        // The baseline: the same mechanism on a cgroup of the benchmark's own, driven directly: the cgroup put in a
        // verdict map the output chain looks sockets up in, and deleted from it.
        let baseline = try ConnectLoop(daemon, in: own.path, port: nginx.port, name: "own")
        defer { baseline.stop() }
        try baseline.waitFor(refused: false, timeoutSeconds: 10)
        let table = "offstage_bench_\(getpid())"
        guard let relative = NftablesBenchmarkAccess.relativeCgroup(own.path) else { throw BenchError("\(own.path) is not below /sys/fs/cgroup") }
        let socket = "socket cgroupv2 level \(own.level)"
        try nftables.run("""
            add table inet \(table)
            add map inet \(table) refused { typeof \(socket) : verdict; }
            add chain inet \(table) refuse
            add rule inet \(table) refuse meta l4proto tcp reject with tcp reset
            add chain inet \(table) out { type filter hook output priority 0; }
            add rule inet \(table) out \(socket) vmap @refused

            """)
        defer { _ = try? nftables.run("delete table inet \(table)\n") }
        let rule = "add element inet \(table) refused { \"\(relative)\" : goto refuse }\n"
        var rawBlocks: [UInt64] = []
        var rawLifts: [UInt64] = []
        for _ in 0..<settingTrips {
            MonotonicClock.sleep(milliseconds: gapMilliseconds)
            var start = MonotonicClock.now()
            try nftables.run(rule)
            rawBlocks.append(try baseline.waitFor(refused: true, timeoutSeconds: 5) - start)
            MonotonicClock.sleep(milliseconds: gapMilliseconds)
            start = MonotonicClock.now()
            try nftables.run("delete element inet \(table) refused { \"\(relative)\" }\n")
            rawLifts.append(try baseline.waitFor(refused: false, timeoutSeconds: 5) - start)
        }
        Report.record(benchmark, Metrics.settingToRule, blocks)
        Report.record(benchmark, Metrics.rawRule, rawBlocks)
        let (block, lift) = (Distribution(blocks), Distribution(lifts))
        let (rawBlock, rawLift) = (Distribution(rawBlocks), Distribution(rawLifts))
        Report.heading("Data controls: a setting change → the rule in force, \(settingTrips) blocks and lifts")
        Report.line("seen by a process in the app's cgroup connecting to 127.0.0.1 in a loop (one attempt every ~70 µs)")
        Report.latency("background data off → connections refused", block)
        Report.latency("background data on → connections accepted", lift)
        Report.line(String(format: "home → connections refused (once): %.3f ms", Double(homeBlocked) / 1e6))
        Report.latency("baseline: the cgroup's element added with libnftables", rawBlock)
        Report.latency("baseline: the element deleted with libnftables", rawLift)
        Report.line("ratio block / raw: p50 \(Report.ratio(block.p50, rawBlock.p50)), p99 \(Report.ratio(block.p99, rawBlock.p99))")
        Report.line("ratio lift / raw: p50 \(Report.ratio(lift.p50, rawLift.p50)), p99 \(Report.ratio(lift.p99, rawLift.p99))")
    }

    static func setBackgroundData(_ daemon: DaemonFixture, _ id: String, on: Bool) throws {
        _ = try daemon.call(
            ControlInterface.Method.setSettings,
            ControlInterface.SetSettingsParameters(app: id, changes: ["background-data": on ? "on" : "off"]),
            as: ControlInterface.SettingsReply.self)
    }

    // MARK: 3. Lifecycle with and without rules

    static func lifecycle(_ benchmark: Benchmark) throws {
        let plain = try DaemonFixture(settings: ["suspendDelay": 0, "dataControls": false])
        defer { plain.tearDown() }
        let ruled = try DaemonFixture(settings: ["suspendDelay": 0])
        defer { ruled.tearDown() }
        try plain.start()
        try ruled.start()
        guard try plain.status().dataControls == "advisory", try ruled.status().dataControls == "enforced" else {
            throw BenchError("one daemon should enforce the data controls and the other not")
        }
        let plainRig = try LifecycleRig(plain, id: "bench.plain", freezer: try plain.status().freezer)
        let ruledRig = try LifecycleRig(ruled, id: "bench.ruled", freezer: try ruled.status().freezer)
        _ = try ruled.call(
            ControlInterface.Method.setDevice, ControlInterface.SetDeviceParameters(network: "metered"),
            as: ControlInterface.DeviceReply.self)
        try setBackgroundData(ruled, "bench.ruled", on: false)

        var samples: [String: (home: [UInt64], open: [UInt64])] = ["plain": ([], []), "ruled": ([], [])]
        for block in 0..<(lifecycleBlocks + 1) {
            for (name, rig) in block % 2 == 0 ? [("plain", plainRig), ("ruled", ruledRig)] : [("ruled", ruledRig), ("plain", plainRig)] {
                for _ in 0..<cyclesPerBlock {
                    MonotonicClock.sleep(milliseconds: gapMilliseconds)
                    let home = try rig.home()
                    MonotonicClock.sleep(milliseconds: gapMilliseconds)
                    let (openStart, stamp) = try rig.open()
                    // The first block warms both up.
                    guard block > 0 else { continue }
                    samples[name]?.home.append(home.frozen.at - home.start)
                    samples[name]?.open.append(stamp.didBecomeActive - openStart)
                }
            }
        }
        let blocked = try ruled.call(
            ControlInterface.Method.status, NoParameters(), as: ControlInterface.StatusReply.self)
        Report.record(benchmark, Metrics.homeFrozenRuled, samples["ruled"]!.home)
        Report.record(benchmark, Metrics.openActiveRuled, samples["ruled"]!.open)
        let homeRuled = Distribution(samples["ruled"]!.home)
        let homePlain = Distribution(samples["plain"]!.home)
        let openRuled = Distribution(samples["ruled"]!.open)
        let openPlain = Distribution(samples["plain"]!.open)
        Report.heading(
            "Data controls: home → frozen and open → did-become-active with a block and a lift each trip, \(lifecycleBlocks * cyclesPerBlock) cycles each")
        Report.line("rules daemon: data controls \(blocked.dataControls); the app has background data off on a metered network")
        Report.latency("home → frozen, rules in force (handlers included)", homeRuled)
        Report.latency("baseline: the same, data controls off", homePlain)
        Report.line("ratio: p50 \(Report.ratio(homeRuled.p50, homePlain.p50)), p99 \(Report.ratio(homeRuled.p99, homePlain.p99)); target p99 ≤ 1 ms: \(Report.verdict(homeRuled.p99 <= 1_000_000))")
        Report.latency("open → did-become-active, rules in force (a lift first)", openRuled)
        Report.latency("baseline: the same, data controls off", openPlain)
        Report.line("ratio: p50 \(Report.ratio(openRuled.p50, openPlain.p50)), p99 \(Report.ratio(openRuled.p99, openPlain.p99)); target p99 ≤ 2 ms: \(Report.verdict(openRuled.p99 <= 2_000_000))")
    }
}

/// A cgroup2 group of the benchmark's own, `offstage-bench-net-<pid>`, that no rule of the daemon's matches.
struct OwnGroup {
    let path: String
    /// Its depth below the cgroup2 root, as nftables compares it.
    let level: Int

    init(mount: String) throws {
        path = mount + "/offstage-bench-net-\(getpid())"
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw SystemCallError("mkdir \(path)") }
        level = 1
    }

    /// Removes the group (its processes have ended).
    func remove() { rmdir(path) }
}

/// The helper's `connect-loop` in a cgroup: connects to a port again and again and reports each change between
/// accepted and refused, with its time.
final class ConnectLoop {
    let process: ChildProcess
    let reports: Int32

    init(_ daemon: DaemonFixture, in group: String, port: Int, name: String) throws {
        let path = daemon.root + "/connect-\(name).sock"
        reports = try UnixSocket.bindDatagram(path: path)
        let helper = try Products.path("OffstageBenchHelper")
        process = try ChildProcess(
            "/bin/sh", ["-c", "echo $$ > '\(group)/cgroup.procs' && exec \(helper) connect-loop \(port) \(path)"],
            outputPath: daemon.root + "/connect-\(name).log")
    }

    /// Waits until the loop reports refused (or accepted) connections; returns when the first one was seen.
    @discardableResult
    func waitFor(refused: Bool, timeoutSeconds: Double) throws -> UInt64 {
        let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
        while MonotonicClock.now() < deadline {
            guard let bytes = try UnixSocket.receiveDatagram(reports, timeoutMilliseconds: 100) else { continue }
            let words = String(decoding: bytes, as: UTF8.self).split(separator: " ")
            guard words.count == 2, let at = UInt64(words[1]) else { continue }
            if (words[0] == "refused") == refused { return at }
        }
        throw BenchError("the connect loop did not see connections \(refused ? "refused" : "accepted") within \(timeoutSeconds) s")
    }

    /// Ends the loop and closes the report socket.
    func stop() {
        process.stop(grace: 1)
        close(reports)
    }
}
