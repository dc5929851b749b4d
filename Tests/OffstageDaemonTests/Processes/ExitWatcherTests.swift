import COffstageSystem
import Foundation
import Glibc
import Testing

@testable import OffstageDaemon

@Suite("Exit watcher")
struct ExitWatcherTests {
    @Test("Own children are reaped with their exit code or signal")
    func childStatuses() throws {
        try withHarness(.signalStop) { harness in
            let exiting = try harness.spawn(SpawnRequest(executable: "/bin/sh", arguments: ["-c", "exit 3"]))
            let killed = try harness.spawn(SpawnRequest(executable: "/bin/sleep", arguments: ["1000"]))
            try harness.control.kill(killed.group, leader: killed.leader)
            #expect(harness.recorder.status(of: exiting.leader) == .exited(3))
            #expect(harness.recorder.status(of: killed.leader) == .signaled(SIGKILL))
            #expect(AppExitStatus.exited(3).isAbnormal && AppExitStatus.signaled(9).isAbnormal)
            #expect(!AppExitStatus.exited(0).isAbnormal && !AppExitStatus.unknown.isAbnormal)
            #expect(ProcessFixtures.eventually { harness.watcher.watchedCount == 0 }, "pidfds are closed after exit")
        }
    }

    @Test("A process that is not our child is reported as ended with unknown status")
    func nonChildIsUnknown() throws {
        let directory = try ProcessFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pidFile = directory.appendingPathComponent("pid").path
        try withHarness(.signalStop) { harness in
            // The grandchild is the shell's child, not ours.
            let launch = try harness.spawn(
                SpawnRequest(executable: "/bin/sh", arguments: ["-c", "/bin/sleep 1000 & echo $! > \(pidFile); wait"]))
            var text = ""
            _ = ProcessFixtures.eventually {
                text = (try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? ""
                return text.hasSuffix("\n")
            }
            let sleeper = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
            let startTime = try #require(ProcFS().startTime(of: sleeper))

            #expect(throws: ProcessControlError.noSuchProcess(pid: sleeper)) {
                try harness.watcher.watch(pid: sleeper, startTime: startTime + 1)
            }
            try harness.watcher.watch(pid: sleeper, startTime: startTime)
            Glibc.kill(sleeper, SIGKILL)
            #expect(harness.recorder.status(of: sleeper) == .unknown)
            // The shell's wait returns once its child is gone, and the shell exits normally.
            #expect(harness.recorder.status(of: launch.leader) == .exited(0))
        }
    }

    @Test("Watching a process that has already gone throws noSuchProcess")
    func watchGoneProcess() throws {
        try withHarness(.signalStop) { harness in
            let launch = try harness.spawn(SpawnRequest(executable: "/bin/true"))
            #expect(harness.recorder.status(of: launch.leader) == .exited(0))
            #expect(throws: ProcessControlError.noSuchProcess(pid: launch.leader)) {
                try harness.watcher.watch(pid: launch.leader)
            }
        }
    }

    @Test("An idle watcher's thread sleeps in the kernel: no wake-ups at all")
    func idleWatcherDoesNotWake() throws {
        let watcher = try ExitWatcher(mode: .ownChildrenOnly) { _, _ in }
        defer { watcher.shutdown() }
        var threads: [Int32] = []
        _ = ProcessFixtures.eventually {
            threads = watcher.threadIDs
            return threads.count == 1
        }
        try #require(threads.count == 1)
        let before = threads.map(Self.contextSwitches)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(threads.map(Self.contextSwitches) == before)
    }

    @Test("shutdown stops the watcher's threads, and a stopped watcher refuses new work")
    func shutdownStopsThreads() throws {
        let watcher = try ExitWatcher(mode: .ownChildrenOnly) { _, _ in }
        _ = ProcessFixtures.eventually { watcher.threadIDs.count == 1 }
        let threads = watcher.threadIDs
        func name(_ thread: Int32) -> String {
            (try? String(contentsOfFile: "/proc/self/task/\(thread)/comm", encoding: .utf8)) ?? ""
        }
        #expect(threads.allSatisfy { name($0).hasPrefix("offstage-") }, "the watcher's threads carry its names")
        watcher.shutdown()
        watcher.shutdown()
        for thread in threads {
            // The tid may already belong to another thread of this test process: what must be gone is the watcher's.
            #expect(!name(thread).hasPrefix("offstage-"), "thread \(thread) is still \(name(thread))")
        }
        #expect(throws: ProcessControlError.watcherStopped) { try watcher.watch(pid: getpid()) }
    }

    /// Runs the `reapAllChildren` mode in a process of its own: in this process other code (Foundation.Process,
    /// other tests) has children that a reap-everything watcher would steal. The test binary itself is re-run with
    /// a filter that selects `reapAllChildrenProbe` only.
    @Test(
        "reapAllChildren reaps children and adopted orphans with their statuses, and wakes for new children",
        .timeLimit(.minutes(1)))
    func reapAllChildrenInSeparateProcess() throws {
        let directory = try ProcessFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("report.txt").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", "reapAllChildrenProbe"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.probeVariable] = report
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines =
            (try? String(contentsOfFile: report, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        #expect(
            lines == [
                "leader as expected", "orphan as expected", "idle wake-ups 0", "second as expected",
                "shutdown done",
            ])
    }

    static let probeVariable = "OFFSTAGE_REAPER_PROBE_REPORT"

    @Test(
        "(helper of reapAllChildrenInSeparateProcess; runs only in the process that test starts)",
        .enabled(if: ProcessInfo.processInfo.environment[probeVariable] != nil))
    func reapAllChildrenProbe() throws {
        let report = try #require(ProcessInfo.processInfo.environment[Self.probeVariable])
        var lines: [String] = []
        defer { try? (lines.map { $0 + "\n" }.joined()).write(toFile: report, atomically: true, encoding: .utf8) }

        try #require(offstage_prctl_set_child_subreaper() == 0)
        let recorder = ExitRecorder()
        let watcher = try ExitWatcher(mode: .reapAllChildren, handler: recorder.handler)
        let control = SignalStopFreezer()
        let group = try control.makeGroup(forApp: "com.example.probe")
        let directory = try ProcessFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pidFile = directory.appendingPathComponent("orphan").path

        // The leader exits at once; its background child outlives it, is re-parented to us (subreaper) and
        // exits after the pid file is read.
        let leader = try watcher.spawn(
            SpawnRequest(
                executable: "/bin/sh",
                arguments: [
                    "-c", "(while [ ! -e \(pidFile).go ]; do sleep 0.05; done; exit 5) & echo $! > \(pidFile); exit 3",
                ]),
            in: group, using: control)
        lines.append("leader " + Self.verdict(recorder.status(of: leader), expected: .exited(3)))
        let orphan = try #require(Int32((try String(contentsOfFile: pidFile, encoding: .utf8)).dropLast()))
        #expect(ProcFS().parentPid(of: orphan) == getpid())
        _ = FileManager.default.createFile(atPath: pidFile + ".go", contents: nil)
        lines.append("orphan " + Self.verdict(recorder.status(of: orphan), expected: .exited(5)))

        // No children now: the reaper sleeps on its condition until a child is announced.
        #expect(watcher.threadIDs.count == 2)
        Thread.sleep(forTimeInterval: 0.1)
        let before = watcher.threadIDs.map(Self.contextSwitches)
        Thread.sleep(forTimeInterval: 0.5)
        let wakeUps = zip(before, watcher.threadIDs.map(Self.contextSwitches)).map { $1 - $0 }.reduce(0, +)
        lines.append("idle wake-ups \(wakeUps)")

        let second = try watcher.spawn(
            SpawnRequest(executable: "/bin/sh", arguments: ["-c", "exit 7"]), in: group, using: control)
        lines.append("second " + Self.verdict(recorder.status(of: second), expected: .exited(7)))
        watcher.shutdown()
        lines.append("shutdown done")
    }

    static func verdict(_ status: AppExitStatus?, expected: AppExitStatus) -> String {
        guard let status else { return "not reported" }
        return status == expected ? "as expected" : "\(status) instead of \(expected)"
    }

    // Voluntary plus involuntary context switches of a thread of this process.
    static func contextSwitches(_ thread: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/task/\(thread)/status", encoding: .utf8) else {
            return -1
        }
        return status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
            .compactMap { Int($0.split(separator: "\t").last ?? "") }.reduce(0, +)
    }
}
