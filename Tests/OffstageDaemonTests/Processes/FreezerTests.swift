import Foundation
import Glibc
import Testing

@testable import OffstageDaemon

/// The freezers against real process trees, once per freezer this machine has.
///
/// Serialized: each case runs two busy loops, and several at once on two cores would only slow each other down.
@Suite("Freezers", .serialized)
struct FreezerTests {
    @Test(
        "Freezing stops the CPU time of the leader and its forked child; thawing resumes it",
        arguments: ProcessFixtures.availableKinds)
    func freezeStopsWholeTree(kind: FreezerKind) throws {
        try withHarness(kind) { harness in
            let launch = try harness.spawn(ProcessFixtures.busyTree)
            let tree = harness.members(launch, atLeast: 2)
            try #require(tree.count == 2, "the shell and its forked busy loop: \(tree)")
            #expect(tree.contains(launch.leader))

            try harness.control.freeze(launch.group, leader: launch.leader)
            #expect(harness.control.isFrozen(launch.group, leader: launch.leader))
            try expectStateFile(of: launch.group, kind: kind, frozen: true)
            let before = ProcessFixtures.cpuTicks(tree)
            Thread.sleep(forTimeInterval: 0.3)
            let after = ProcessFixtures.cpuTicks(tree)
            #expect(before == after, "no CPU time while frozen")
            #expect(!before.contains(nil))

            try harness.control.thaw(launch.group, leader: launch.leader)
            #expect(!harness.control.isFrozen(launch.group, leader: launch.leader))
            try expectStateFile(of: launch.group, kind: kind, frozen: false)
            let resumed = ProcessFixtures.eventually {
                zip(before, ProcessFixtures.cpuTicks(tree)).allSatisfy { old, new in
                    guard let old, let new else { return false }
                    return new > old
                }
            }
            #expect(resumed, "both processes use CPU again after thawing")
        }
    }

    @Test(
        "Kill ends a frozen tree, and the exit watcher reports the leader as killed by signal 9",
        arguments: ProcessFixtures.availableKinds)
    func killFrozenTree(kind: FreezerKind) throws {
        try withHarness(kind) { harness in
            let launch = try harness.spawn(ProcessFixtures.busyTree)
            let tree = harness.members(launch, atLeast: 2)
            try #require(tree.count == 2)
            try harness.control.freeze(launch.group, leader: launch.leader)

            try harness.control.kill(launch.group, leader: launch.leader)
            #expect(harness.recorder.status(of: launch.leader) == .signaled(SIGKILL))
            #expect(ProcessFixtures.eventually { tree.allSatisfy { !ProcFS().isAlive(pid: $0) } })
            #expect(!harness.control.isFrozen(launch.group, leader: launch.leader))
        }
    }

    @Test("Terminate delivers SIGTERM to every process of a frozen tree", arguments: ProcessFixtures.availableKinds)
    func terminateFrozenTree(kind: FreezerKind) throws {
        try withHarness(kind) { harness in
            let launch = try harness.spawn(ProcessFixtures.busyTree)
            let tree = harness.members(launch, atLeast: 2)
            try #require(tree.count == 2)
            try harness.control.freeze(launch.group, leader: launch.leader)

            try harness.control.terminate(launch.group, leader: launch.leader)
            #expect(harness.recorder.status(of: launch.leader) == .signaled(SIGTERM))
            #expect(ProcessFixtures.eventually { tree.allSatisfy { !ProcFS().isAlive(pid: $0) } })
        }
    }

    @Test(
        "appKey finds the app of the leader and of a grandchild, and no app for an outside process",
        arguments: ProcessFixtures.availableKinds)
    func appKeyOfTree(kind: FreezerKind) throws {
        try withHarness(kind) { harness in
            let launch = try harness.spawn(ProcessFixtures.sleepingGrandchild, app: "com.example.finite-task")
            var grandchild: Int32?
            _ = ProcessFixtures.eventually {
                grandchild = harness.control.members(of: launch.group, leader: launch.leader).first { pid in
                    guard let stat = ProcFS().stat(of: pid) else { return false }
                    return stat.command == "sleep" && stat.parentPid != launch.leader
                }
                return grandchild != nil
            }
            let sleeper = try #require(grandchild, "the shell's subshell forks sleep")
            #expect(harness.control.appKey(owningPid: launch.leader) == "com.example.finite-task")
            #expect(harness.control.appKey(owningPid: sleeper) == "com.example.finite-task")
            #expect(harness.control.appKey(owningPid: getpid()) == nil)
        }
    }

    @Test(
        "adopt takes a process started elsewhere, with its child, into the group",
        arguments: ProcessFixtures.availableKinds)
    func adoptHandStartedProcess(kind: FreezerKind) throws {
        try withHarness(kind) { harness in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "/bin/sleep 1000 & wait"]
            try process.run()
            defer {
                if process.isRunning { process.terminate() }
                process.waitUntilExit()
            }
            let pid = process.processIdentifier
            let procFS = ProcFS()
            var child: Int32?
            _ = ProcessFixtures.eventually {
                child = procFS.allStats().first { $0.parentPid == pid && $0.command == "sleep" }?.pid
                return child != nil
            }
            let sleeper = try #require(child)

            let group = try harness.control.makeGroup(forApp: "com.example.adopted")
            try harness.control.adopt(pid: pid, into: group)
            #expect(Set(harness.control.members(of: group, leader: pid)).isSuperset(of: [pid, sleeper]))
            #expect(harness.control.appKey(owningPid: sleeper) == "com.example.adopted")

            try harness.control.kill(group, leader: pid)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL)
            #expect(ProcessFixtures.eventually { !procFS.isAlive(pid: sleeper) })
            harness.control.removeGroup(group)
        }
    }

    @Test(
        "makeGroup reuses an existing group, and removeGroup leaves a busy one in place",
        .enabled(if: ProcessFixtures.hasCgroups, ProcessFixtures.noCgroupsMessage),
        arguments: ProcessFixtures.cgroupKinds)
    func groupsAreReusedAndKeptWhileBusy(kind: FreezerKind) throws {
        try withHarness(kind) { harness in
            let launch = try harness.spawn(SpawnRequest(executable: "/bin/sleep", arguments: ["1000"]))
            let again = try harness.control.makeGroup(forApp: "com.example.app")
            #expect(again == launch.group)
            #expect(harness.control.members(of: again, leader: launch.leader) == [launch.leader])
            harness.control.removeGroup(launch.group)
            let path = try #require(launch.group.cgroupPath)
            #expect(FileManager.default.fileExists(atPath: path), "a group with a process inside stays")
        }
    }

    @Test(
        "Spawning into a frozen group is refused while it holds processes; an empty frozen group is thawed first",
        .enabled(if: ProcessFixtures.hasCgroups, ProcessFixtures.noCgroupsMessage),
        arguments: ProcessFixtures.cgroupKinds)
    func spawnIntoFrozenGroup(kind: FreezerKind) throws {
        try withHarness(kind) { harness in
            let first = try harness.spawn(SpawnRequest(executable: "/bin/sleep", arguments: ["1000"]))
            try harness.control.freeze(first.group, leader: first.leader)
            #expect(throws: ProcessControlError.groupFrozen(app: "com.example.app")) {
                try harness.spawn(SpawnRequest(executable: "/bin/sleep", arguments: ["1000"]))
            }
            // Frozen and empty: what a daemon that died between freeze and kill leaves behind.
            try harness.control.kill(first.group, leader: first.leader)
            #expect(harness.recorder.status(of: first.leader) == .signaled(SIGKILL))
            #expect(ProcessFixtures.eventually { harness.control.members(of: first.group, leader: 0).isEmpty })
            try harness.control.freeze(first.group, leader: 0)
            let second = try harness.spawn(ProcessFixtures.busyTree)
            #expect(!harness.control.isFrozen(second.group, leader: second.leader))
            let tree = harness.members(second, atLeast: 2)
            #expect(tree.count == 2, "the new app runs and forks")
        }
    }

    @Test("The signal freezer never takes the test process or its ancestors for an app")
    func signalFreezerSparesItsOwnTree() throws {
        let control = SignalStopFreezer()
        let group = try control.makeGroup(forApp: "com.example.app")
        for pid in [getpid(), getppid(), getpgrp(), 1, 0] {
            #expect(control.members(of: group, leader: pid).isEmpty)
            #expect(throws: ProcessControlError.self) { try control.freeze(group, leader: pid) }
            #expect(throws: ProcessControlError.self) { try control.kill(group, leader: pid) }
        }
    }

    @Test("Where mkdir of the cgroups is refused, the factory falls back to signals and says why")
    func factoryFallsBack() throws {
        let interceptor = SyscallInterceptor()
        interceptor.fail("mkdir", errno: EACCES)
        let mounts = CgroupMounts(
            unified: .init(mountPoint: "/sys/fs/cgroup", root: "/", isReadOnly: false),
            freezer: .init(mountPoint: "/sys/fs/cgroup/freezer", root: "/", isReadOnly: false))
        var reports: [String] = []
        let control = ProcessControlFactory.best(
            instanceName: "fallback", freezeTimeout: .milliseconds(100), mounts: mounts,
            syscalls: Syscalls(interceptor: interceptor), report: { reports.append($0) })
        #expect(control.kind == .signalStop)
        let expected =
            "process control: using the signalStop freezer (the cgroupV2 freezer cannot be used: "
            + "mkdir /sys/fs/cgroup/offstage.fallback failed: Permission denied; "
            + "run offstaged as root or delegate the cgroup to its user; the cgroupV1 freezer cannot be used: "
            + "mkdir /sys/fs/cgroup/freezer/offstage.fallback failed: Permission denied; "
            + "run offstaged as root or delegate the cgroup to its user)"
        #expect(reports == [expected])
    }

    @Test("The factory picks the best freezer this machine has")
    func factoryPicksBest() {
        var reports: [String] = []
        let control = ProcessControlFactory.best(instanceName: ProcessFixtures.uniqueInstanceName("best")) {
            reports.append($0)
        }
        defer { control.removeAll() }
        #expect(control.kind == ProcessFixtures.availableKinds.first)
        #expect(reports.count == 1)
    }

    private func expectStateFile(of group: AppGroup, kind: FreezerKind, frozen: Bool) throws {
        guard let path = group.cgroupPath else { return }
        switch kind {
        case .cgroupV2:
            let events = try String(contentsOfFile: path + "/cgroup.events", encoding: .utf8)
            #expect(events.contains(frozen ? "frozen 1" : "frozen 0"), "cgroup.events: \(events)")
        case .cgroupV1:
            let state = try String(contentsOfFile: path + "/freezer.state", encoding: .utf8)
            #expect(state == (frozen ? "FROZEN\n" : "THAWED\n"), "freezer.state: \(state)")
        case .signalStop:
            break
        }
    }
}
