import Foundation
import OffstageProtocol
import OffstageSimulator

/// Memory pressure under kill -9 (SPEC MEM-1, §11 reliability): `CrashHarness --memory-episodes N`. Each episode
/// installs four real photo viewers (decoded photos are real memory), suspends three of them least recently used first
/// and keeps one in front, sets the memory pressure to critical, and kills the daemon in the middle of the answer: half
/// the time at a random moment while it ends the apps one by one, half the time aimed at the instant an app's process
/// is gone (the daemon has sent SIGKILL and may not have seen the exit yet). The restarted daemon either goes on with
/// the pressure (it is a setting, kept across the restart) until every viewer is ended, or has it set back.
///
/// What is checked after every restart:
/// - **no record lost**: each viewer whose process is gone has `ended for memory (pressure critical): …` as its last
///   exit, whichever daemon saw the exit (or did not: the reason is written before the signal);
/// - **no app killed twice**: each viewer has at most one exit and at most one kill recorded for memory, and a viewer
///   still running has none;
/// - **nothing left**: after the daemon's graceful stop, no viewer's process runs.
final class MemoryEpisodes {
    let daemon: HarnessDaemon
    var random: SeededGenerator
    var violations: [String] = []
    var episode = 0
    /// Every viewer pid seen, to end any left by pid.
    var seenPids: Set<Int32> = []
    var figures = Figures()
    /// The daemon was stopped gracefully at the end: it removed its groups and ended its apps.
    var stoppedGracefully = false

    struct Figures {
        var episodes = 0
        var aimedKills = 0
        var endedBeforeKill = 0
        var endedAfterRestart = 0
        /// Viewers whose exit the restarted daemon recorded from the reason written before the signal.
        var recordedByNextDaemon = 0
        var survivors = 0
        var recoveries: [Double] = []
    }

    init(seed: UInt64) throws {
        random = SeededGenerator(seed: seed ^ 0x6D65_6D6F_7279_2121)
        let root = NSTemporaryDirectory() + "offstage-crash-memory-\(seed)-\(getpid())"
        try? FileManager.default.removeItem(atPath: root)
        daemon = try HarnessDaemon(
            root: root,
            json: [
                "suspendDelay": 0.2, "willTerminateTimeout": 1, "terminationGrace": 0.4, "didEnterBackgroundTimeout": 1,
                "callbackTimeout": 1, "reattachTimeout": 3,
                // A freeze slowed by a loaded machine is not what this run checks.
                "freezeTimeout": 2,
                // Apps go quickly once warned, one every quarter second: an episode of four takes about a second.
                "memory": ["warningGrace": 0.2, "endingInterval": 0.25],
            ])
    }

    func violation(_ text: String) {
        violations.append("memory episode \(episode): \(text)")
        FileHandle.standardError.write(Data("VIOLATION memory episode \(episode): \(text)\n".utf8))
    }

    /// A viewer's bundle, made once per id: four photos of 2 MiB decoded at launch.
    func bundle(_ id: String) throws -> String {
        let folder = daemon.root + "/source/" + id
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let manifest: [String: Any] = [
            "CFBundleIdentifier": id, "CFBundleExecutable": "PhotoViewer",
            "OffstageLinux": ["Arguments": ["--photo-mb", "2", "--at-launch", "4"]],
        ]
        try PropertyListSerialization.data(fromPropertyList: manifest, format: .xml, options: 0)
            .write(to: URL(fileURLWithPath: folder + "/Info.plist"))
        try FileManager.default.copyItem(
            atPath: HarnessDaemon.products.appendingPathComponent("PhotoViewer").path, toPath: folder + "/PhotoViewer")
        return folder
    }

    func ok(_ arguments: [String]) throws {
        let output = try daemon.cli(arguments)
        guard output.status == 0 else {
            throw HarnessFailure("offstage \(arguments.joined(separator: " ")) failed (\(output.status)): \(output.stderr)")
        }
    }

    /// Waits until `condition` holds on the apps' list, up to `seconds`.
    func waitFor(_ what: String, seconds: Double = 15, _ condition: ([ControlInterface.App]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(try daemon.apps()) { return }
            usleep(20_000)
        }
        throw HarnessFailure("timed out waiting for \(what)")
    }

    /// Whether the process runs: a zombie (killed, not reaped yet) does not.
    static func alive(_ pid: Int32) -> Bool { CrashInvariants.isAlive(pid) }

    func run(episodes: Int) -> (summary: String, violations: [String]) {
        let started = Date()
        do {
            figures.recoveries.append(try daemon.start())
            for number in 1...max(1, episodes) {
                episode = number
                do {
                    try runEpisode()
                } catch {
                    violation("\(error)")
                    daemon.crash()
                    _ = try? daemon.start()
                }
            }
            let pids = try daemon.apps().compactMap(\.pid)
            seenPids.formUnion(pids)
            daemon.stop()
            stoppedGracefully = true
            for pid in pids where Self.alive(pid) { violation("viewer pid \(pid) outlived the daemon's graceful stop") }
        } catch {
            violation("\(error)")
        }
        let sorted = figures.recoveries.sorted()
        let p50 = sorted.isEmpty ? 0 : sorted[sorted.count / 2] * 1000
        let summary = """
            memory episodes: \(figures.episodes) kill -9 in the middle of the answer to memory pressure, \
            \(figures.aimedKills) aimed at an app's end; \(figures.endedBeforeKill) viewers ended before a kill, \
            \(figures.endedAfterRestart) after the restart, \(figures.recordedByNextDaemon) of them recorded by the next \
            daemon from the reason written before the signal, \(figures.survivors) left running; restart p50 \
            \(String(format: "%.1f", p50)) ms; \(String(format: "%.0f", Date().timeIntervalSince(started))) s
            memory violations: \(violations.count)
            """
        return (summary, violations)
    }

    func runEpisode() throws {
        let ids = (1...4).map { "com.crash.viewer\(episode)-\($0)" }
        for id in ids { try ok(["install", try bundle(id)]) }
        try ok(["device", "--memory-pressure", "auto"])
        // Three suspended, least recently used first; the fourth in front.
        for id in ids.dropLast() {
            try ok(["open", id])
            try waitFor("\(id) active") { $0.first { $0.id == id }?.state == "active" }
            try ok(["home"])
            try waitFor("\(id) suspended") { $0.first { $0.id == id }?.state == "suspended" }
        }
        try ok(["open", ids[3]])
        try waitFor("\(ids[3]) active") { $0.first { $0.id == ids[3] }?.state == "active" }
        var pids: [String: Int32] = [:]
        for app in try daemon.apps() where ids.contains(app.id) { pids[app.id] = app.pid }
        guard pids.count == 4 else { throw HarnessFailure("viewers without a pid: \(pids)") }
        seenPids.formUnion(pids.values)

        try ok(["device", "--memory-pressure", "critical"])
        if random.chance(0.5) {
            // Aimed: the moment the first viewer's process is gone, before the daemon may have seen its exit.
            let first = pids[ids[0]]!
            let deadline = Date().addingTimeInterval(10)
            while Self.alive(first) && Date() < deadline { usleep(100) }
            figures.aimedKills += 1
        } else {
            usleep(UInt32(random.uniform(0, 1.3) * 1_000_000))
        }
        daemon.crash()
        figures.episodes += 1
        let endedBefore = pids.values.filter { !Self.alive($0) }.count
        figures.endedBeforeKill += endedBefore

        figures.recoveries.append(try daemon.start())
        if random.chance(0.5) {
            // The pressure stays (a setting kept across the restart): the restarted daemon ends the rest.
            try waitFor("every viewer ended", seconds: 20) { apps in
                ids.allSatisfy { id in apps.first { $0.id == id }?.state == "notRunning" }
            }
        }
        try ok(["device", "--memory-pressure", "auto"])
        try check(ids: ids, pids: pids, endedBefore: endedBefore)
        for id in ids { try ok(["uninstall", id]) }
    }

    func check(ids: [String], pids: [String: Int32], endedBefore: Int) throws {
        let apps = try daemon.apps()
        var ended = 0
        for id in ids {
            guard let pid = pids[id], let app = apps.first(where: { $0.id == id }) else {
                violation("\(id) is not listed")
                continue
            }
            let log = try daemon.json(["log", "--limit", "5000", "--app", id], as: [ControlInterface.LogLine].self)
            let exits = log.filter { $0.kind == "exit" && $0.message.hasPrefix("ended for memory") }
            let kills = log.filter { $0.kind == "kill" && $0.message.hasPrefix("ended for memory") }
            if exits.count > 1 || kills.count > 1 {
                violation("\(id) (pid \(pid)) ended twice for memory: \((exits + kills).map(\.message))")
            }
            if Self.alive(pid) {
                figures.survivors += 1
                if app.lastTermination?.hasPrefix("ended for memory") == true || !exits.isEmpty {
                    violation("\(id) runs (pid \(pid)) but is recorded as ended for memory")
                }
                continue
            }
            ended += 1
            guard let last = app.lastTermination, last.hasPrefix("ended for memory (pressure critical): ") else {
                violation("record lost: \(id) (pid \(pid)) is gone but its last exit says \(app.lastTermination ?? "nothing")")
                continue
            }
            if exits.contains(where: { $0.message.hasSuffix("its exit came while the daemon was down") }) {
                figures.recordedByNextDaemon += 1
            }
        }
        figures.endedAfterRestart += max(0, ended - endedBefore)
    }
}

extension CrashHarness {
    /// `--memory-episodes N`: the memory episodes alone, with a daemon of their own; exits 0 when no invariant broke.
    static func runMemoryEpisodes(_ count: Int, seed: UInt64) -> Never {
        do {
            let episodes = try MemoryEpisodes(seed: seed)
            let result = episodes.run(episodes: count)
            // Whatever happened, nothing of the run stays: the daemon (stopped, or started to be stopped), the viewers by
            // pid, the folder.
            if !episodes.stoppedGracefully {
                // A graceful stop ends the apps and removes the daemon's groups, which a kill -9 leaves behind.
                if episodes.daemon.process == nil { _ = try? episodes.daemon.start() }
                episodes.daemon.stop()
            }
            for pid in episodes.seenPids where CrashInvariants.isAlive(pid) { kill(pid, SIGKILL) }
            try? FileManager.default.removeItem(atPath: episodes.daemon.root)
            print(result.summary)
            exit(result.violations.isEmpty ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("crash harness: \(error)\n".utf8))
            exit(2)
        }
    }
}
