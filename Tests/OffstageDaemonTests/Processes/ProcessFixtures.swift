import Foundation
import Glibc
import Synchronization
import Testing

@testable import OffstageDaemon

/// Shared set-up for the process tests: which freezers this machine has, unique cgroup names, an exit recorder,
/// and a harness that ends exactly the processes a test started and removes its cgroups.
enum ProcessFixtures {
    /// Why each unusable freezer kind cannot be used here, found by trying to create (and then removing) a cgroup
    /// of each kind.
    static let unavailable: [FreezerKind: String] = {
        var reasons: [FreezerKind: String] = [:]
        for kind in FreezerKind.allCases {
            do {
                try ProcessControlFactory.make(kind, instanceName: uniqueInstanceName("probe")).removeAll()
            } catch {
                reasons[kind] = "\(error)"
            }
        }
        return reasons
    }()

    /// The freezers usable here.
    static let availableKinds: [FreezerKind] = FreezerKind.allCases.filter { unavailable[$0] == nil }

    /// The cgroup freezers usable here.
    static let cgroupKinds: [FreezerKind] = availableKinds.filter { $0 != .signalStop }

    /// Whether some cgroup freezer works here; the cgroup tests are skipped otherwise.
    static let hasCgroups = !cgroupKinds.isEmpty

    /// Why the cgroup tests are skipped, when they are.
    static let noCgroupsMessage = Comment(
        rawValue: "no writable cgroup hierarchy (needs root and a cgroup2 or v1 freezer mount): "
            + [FreezerKind.cgroupV2, .cgroupV1].compactMap { unavailable[$0] }.joined(separator: "; "))

    private static let counter = Atomic<Int>(0)

    /// A cgroup instance name no other test (or test process) uses.
    static func uniqueInstanceName(_ label: String) -> String {
        "test-\(getpid())-\(counter.add(1, ordering: .relaxed).newValue)-\(label)"
    }

    /// A busy loop in the leader and in a forked child, so a freeze must reach both.
    static let busyTree = SpawnRequest(
        executable: "/bin/sh", arguments: ["-c", "while :; do :; done & while :; do :; done"])

    /// A leader whose child forks a grandchild (`sleep`), for ancestry checks.
    static let sleepingGrandchild = SpawnRequest(
        executable: "/bin/sh", arguments: ["-c", "(/bin/sleep 1000; :) & wait"])

    /// Polls `condition` until it holds or `timeout` passes; for waiting on other processes, never for timing.
    static func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }

    /// A temporary directory removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-proc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The CPU ticks of each pid, nil for one that is gone.
    static func cpuTicks(_ pids: [Int32]) -> [UInt64?] {
        pids.map { ProcFS().stat(of: $0)?.cpuTicks }
    }
}

/// Collects the exits an `ExitWatcher` reports and lets a test wait for one.
final class ExitRecorder: Sendable {
    private let exits = Mutex<[Int32: AppExitStatus]>([:])

    /// The handler to give the watcher.
    var handler: ExitWatcher.Handler {
        { [self] pid, status in exits.withLock { $0[pid] = status } }
    }

    /// The status reported for `pid`, waiting up to `timeout` for it.
    func status(of pid: Int32, timeout: Duration = .seconds(10)) -> AppExitStatus? {
        var result: AppExitStatus?
        _ = ProcessFixtures.eventually(timeout: timeout) {
            result = exits.withLock { $0[pid] }
            return result != nil
        }
        return result
    }

    /// Whether an exit was reported for `pid` (without waiting).
    func hasExit(of pid: Int32) -> Bool { exits.withLock { $0[pid] != nil } }
}

/// One freezer instance with its own cgroup directory, an exit watcher for its children, and clean-up that kills
/// every tree the test launched and removes every cgroup it made.
final class ProcessHarness: @unchecked Sendable {
    let control: any ProcessControl
    let recorder = ExitRecorder()
    let watcher: ExitWatcher
    let interceptor: SyscallInterceptor?
    let instanceName: String
    // Only touched from the test's own thread.
    private var launched: [(group: AppGroup, leader: Int32)] = []

    /// A harness for `kind`. Tests use a generous freeze timeout: they run beside other busy tests on two cores,
    /// and what they check is the frozen state, not the latency.
    init(_ kind: FreezerKind, interceptor: SyscallInterceptor? = nil, freezeTimeout: Duration = .seconds(3)) throws {
        self.interceptor = interceptor
        instanceName = ProcessFixtures.uniqueInstanceName(kind.rawValue)
        control = try ProcessControlFactory.make(
            kind, instanceName: instanceName, freezeTimeout: freezeTimeout, mounts: .current(),
            syscalls: Syscalls(interceptor: interceptor))
        watcher = try ExitWatcher(mode: .ownChildrenOnly, handler: recorder.handler)
    }

    /// Spawns into the group of `app` (made if needed) and watches the child.
    func spawn(_ request: SpawnRequest, app: String = "com.example.app") throws -> (group: AppGroup, leader: Int32) {
        let group = try control.makeGroup(forApp: app)
        let leader = try watcher.spawn(request, in: group, using: control)
        launched.append((group, leader))
        return (group, leader)
    }

    /// Waits until the group has at least `count` live members and returns them.
    func members(_ launch: (group: AppGroup, leader: Int32), atLeast count: Int) -> [Int32] {
        var members: [Int32] = []
        _ = ProcessFixtures.eventually {
            members = control.members(of: launch.group, leader: launch.leader).filter { ProcFS().isAlive(pid: $0) }
            return members.count >= count
        }
        return members
    }

    /// The directory of this instance's cgroups, if the freezer uses cgroups.
    var instancePath: String? {
        (control as? FreezerCgroupV2)?.hierarchy.instancePath ?? (control as? FreezerCgroupV1)?.hierarchy.instancePath
    }

    /// Kills what the test launched, waits for it to be gone, removes the cgroups and stops the watcher.
    func cleanUp() {
        for (group, leader) in launched {
            let members = control.members(of: group, leader: leader)
            try? control.kill(group, leader: leader)
            _ = recorder.status(of: leader)
            _ = ProcessFixtures.eventually {
                members.allSatisfy { !ProcFS().isAlive(pid: $0) }
                    && control.members(of: group, leader: leader).allSatisfy { !ProcFS().isAlive(pid: $0) }
            }
        }
        _ = ProcessFixtures.eventually {
            control.removeAll()
            return instancePath.map { !FileManager.default.fileExists(atPath: $0) } ?? true
        }
        watcher.shutdown()
        if let instancePath {
            #expect(!FileManager.default.fileExists(atPath: instancePath), "cgroup \(instancePath) was left behind")
        }
    }
}

/// Runs `body` with a harness and always cleans up after it.
@discardableResult
func withHarness<Result>(
    _ kind: FreezerKind,
    interceptor: SyscallInterceptor? = nil,
    freezeTimeout: Duration = .seconds(3),
    _ body: (ProcessHarness) throws -> Result
) throws -> Result {
    let harness = try ProcessHarness(kind, interceptor: interceptor, freezeTimeout: freezeTimeout)
    defer { harness.cleanUp() }
    return try body(harness)
}
