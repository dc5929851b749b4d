import Foundation
import Glibc
import Logging
import OffstageCore
import Testing

@testable import OffstageDaemon

/// The apps' groups under the kernel's memory controller (SPEC MEM-1, MEM-2), against the real kernel where this machine
/// has a controller the tests can use (as root), and their error paths with a refused write.
@Suite("Memory groups under the kernel's memory controller (SPEC MEM-2)")
struct MemoryCgroupsTests {
    /// Why no memory controller can be used here, nil when one can: found by making (and at once removing) a group.
    /// Evaluated in every test process, the suite's or not (its traits are built at discovery), so it leaves nothing.
    static let notUsable: String? = {
        switch MemoryCgroups.make(instanceName: ProcessFixtures.uniqueInstanceName("memory-probe"), mounts: .current()) {
        case .success(let cgroups):
            cgroups.removeAll()
            return nil
        case .failure(let why):
            return "no memory controller usable here: \(why)"
        }
    }()
    static var usable: Bool { notUsable == nil }
    static let unusable = Comment(rawValue: notUsable ?? "")

    static func make(_ syscalls: Syscalls = .live) throws -> MemoryCgroups {
        try MemoryCgroups.make(instanceName: ProcessFixtures.uniqueInstanceName("memory"), mounts: .current(), syscalls: syscalls).get()
    }

    /// A process that writes `megabytes` MiB (every page) and then waits.
    static func allocating(_ megabytes: Int, join procs: String) -> SpawnRequest {
        var request = SpawnRequest(
            executable: "/bin/sh",
            arguments: ["-c", "exec python3 -c 'import time; b = b\"x\" * (\(megabytes) << 20); print(\"allocated\", flush=True); time.sleep(60)'"],
            environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"])
        request.alsoJoin = [procs]
        return request
    }

    @Test("MEM-2: the oom_kill count is read from cgroup v1's memory.oom_control and cgroup2's memory.events; anything else is unreadable")
    func parsesKillCounts() {
        #expect(MemoryCgroups.outOfMemoryKills(events: "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n") == 3)
        #expect(MemoryCgroups.outOfMemoryKills(events: "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n") == 2)
        #expect(MemoryCgroups.outOfMemoryKills(events: "oom_kill_disable 0\nunder_oom 0\n") == nil)
        #expect(MemoryCgroups.outOfMemoryKills(events: "oom_kill many\n") == nil)
    }

    @Test(
        "MEM-2: a process that joined its app's group before exec and outgrows its limit is ended by the kernel (SIGKILL), the group counts the kill, and its usage is read from the group",
        .enabled(if: usable, unusable))
    func kernelEndsAProcessOverTheLimit() throws {
        let cgroups = try Self.make()
        defer { cgroups.removeAll() }
        let procs = try cgroups.prepare(app: "com.example.small", limitBytes: 32 << 20)
        let roomy = try cgroups.prepare(app: "com.example.roomy", limitBytes: nil)
        #expect(cgroups.outOfMemoryKills(app: "com.example.small") == 0)
        try withHarness(.signalStop) { harness in
            let small = try harness.spawn(Self.allocating(64, join: procs), app: "com.example.small")
            let fits = try harness.spawn(Self.allocating(24, join: roomy), app: "com.example.roomy")
            #expect(harness.recorder.status(of: small.leader) == .signaled(SIGKILL))
            #expect(cgroups.outOfMemoryKills(app: "com.example.small") == 1)
            // The other app's group has no limit: its process lives, and its memory is what the group counts.
            #expect(ProcessFixtures.eventually { (cgroups.usageBytes(app: "com.example.roomy") ?? 0) >= 24 << 20 })
            #expect(ProcFS().isAlive(pid: fits.leader))
            #expect(cgroups.outOfMemoryKills(app: "com.example.roomy") == 0)
        }
        // Emptied, the groups and the instance's directory go.
        cgroups.removeAll()
        #expect(!FileManager.default.fileExists(atPath: cgroups.hierarchy.instancePath))
        #expect(cgroups.usageBytes(app: "com.example.small") == nil, "a group that is gone reads as nothing")
    }

    @Test(
        "MEM-2: a limit the kernel refuses leaves the app watched by the daemon, and says why; the others keep theirs",
        .enabled(if: usable, unusable))
    func refusedLimitIsWatched() throws {
        let interceptor = SyscallInterceptor()
        let cgroups = try Self.make(Syscalls(interceptor: interceptor))
        let memory = AppMemory(cgroups: cgroups, logger: Logger(label: "test"))
        defer { memory.removeAll() }
        interceptor.fail("write", targetSuffix: "/com.example.refused/memory.limit_in_bytes", errno: EINVAL)
        interceptor.fail("write", targetSuffix: "/com.example.refused/memory.max", errno: EINVAL)
        #expect(memory.prepareLaunch("com.example.refused", limitBytes: 64 << 20) == [])
        #expect(memory.watches("com.example.refused"))
        let joined = memory.prepareLaunch("com.example.fine", limitBytes: 64 << 20)
        #expect(joined.count == 1 && joined[0].hasSuffix("/com.example.fine/cgroup.procs"))
        #expect(!memory.watches("com.example.fine"))
        #expect(memory.limitsState == "enforced")
        // Given later, the limit is taken again and the app is no longer watched.
        interceptor.removeRules()
        #expect(memory.prepareLaunch("com.example.refused", limitBytes: 64 << 20).count == 1)
        #expect(!memory.watches("com.example.refused"))
    }

    @Test("MEM-2: where cgroup2 has no memory controller to hand down, none is used and the reason names the file; the daemon watches")
    func noControllerSaysWhy() throws {
        let current = CgroupMounts.current()
        guard let unified = current.unified else { try Test.cancel("no cgroup2 here") }
        let controllers = (try? String(contentsOfFile: unified.mountPoint + "/cgroup.controllers", encoding: .utf8)) ?? ""
        guard !controllers.split(whereSeparator: \.isWhitespace).contains("memory") else {
            try Test.cancel("cgroup2 carries the memory controller here")
        }
        let result = MemoryCgroups.make(
            instanceName: ProcessFixtures.uniqueInstanceName("no-memory"), mounts: CgroupMounts(unified: unified, freezer: nil))
        guard case .failure(let why) = result else {
            Issue.record("a controller was found: \(result)")
            return
        }
        #expect(why.reason == "\(unified.mountPoint) (cgroup2) has no memory controller in cgroup.controllers")
        let none = MemoryCgroups.make(instanceName: "x", mounts: CgroupMounts(unified: nil, freezer: nil))
        guard case .failure(let nothing) = none else { return }
        #expect(nothing.reason == "no cgroup hierarchy carries the memory controller in /proc/self/mountinfo")
        let memory = AppMemory(watchedBecause: nothing.reason, logger: Logger(label: "test"))
        #expect(memory.limitsState == "watched" && memory.watches("com.example.any"))
        #expect(memory.prepareLaunch("com.example.any", limitBytes: 1 << 20) == [])
        #expect(
            memory.limitsDetail(watchInterval: 1)
                == "by the daemon, which reads each running limited app's memory every 1 s and ends it over its limit: "
                + "no memory controller is used (no cgroup hierarchy carries the memory controller in /proc/self/mountinfo)")
    }
}
