import Foundation
@testable import OffstageCore
import OffstageSimulator
import Testing

/// A manifest's memory limit (SPEC MEM-2) on virtual time: the kernel's kill over the limit, as the shell reports it,
/// and the daemon's own reading where no memory controller enforces the limit. Either way the app's last exit says it
/// exceeded its memory limit, not that it crashed.
@Suite("Memory limits: what ends an app over its limit, and what its last exit says (SPEC MEM-2)")
struct MemoryLimitTests {
    static func limited(_ id: AppID, megabytes: Int?) -> Manifest {
        var manifest = manifest(id)
        manifest.linux.memoryLimitMB = megabytes
        return manifest
    }

    /// A simulation with A limited to 64 MB and B without a limit, both open once and suspended, then A in front.
    static func running() throws -> Simulation {
        var sim = Simulation()
        sim.install(limited(appA, megabytes: 64), behavior: .init())
        sim.install(limited(appB, megabytes: nil), behavior: .init())
        try sim.openAndSettle(appB)
        sim.home()
        sim.run(for: .seconds(30))
        try sim.openAndSettle(appA)
        return sim
    }

    @Test("MEM-2: the kernel's kill over the limit is the app's last exit: 'exceeded its memory limit of 64 MB (killed by signal 9)', logged, not a crash")
    func kernelKill() throws {
        var sim = try Self.running()
        let pid = try #require(sim.status(of: appA)?.pid)
        sim.memoryLimitKill(of: appA)
        let status = try #require(sim.status(of: appA))
        #expect(status.pid == nil && status.state == .notRunning)
        let record = try #require(status.lastTermination)
        #expect(record.reason == .memoryLimitExceeded(megabytes: 64))
        #expect(record.summary == "exceeded its memory limit of 64 MB (killed by signal 9)")
        #expect(sim.log.last { $0.app == appA }?.message == "exceeded its memory limit of 64 MB (killed by signal 9)")
        #expect(sim.core.device.foregroundApp == nil, "the app in front is gone from the front")
        // The other app is untouched; an app without a limit is never killed this way.
        sim.memoryLimitKill(of: appB)
        #expect(sim.status(of: appB)?.pid != nil && sim.status(of: appB)?.state == .suspended)
        _ = pid
    }

    @Test("MEM-2: where the daemon watches, a reading over the limit ends the app at once with the same reason; at or under it, of an app without a limit, or of another pid, nothing")
    func daemonReading() throws {
        var sim = try Self.running()
        let limit: Int64 = 64 << 20
        sim.memoryRead(of: appA, bytes: limit)
        sim.memoryRead(of: appB, bytes: 1 << 40)
        #expect(sim.status(of: appA)?.pid != nil && sim.status(of: appB)?.pid != nil, "at the limit, or no limit: nothing")
        let pid = try #require(sim.status(of: appA)?.pid)
        var other = sim.core
        _ = other.memoryOverLimit(appA, pid: pid + 1000, bytes: limit + 1, at: sim.now)
        #expect(other.apps[appA]?.process?.termination == nil, "a reading of another process changes nothing")

        sim.memoryRead(of: appA, bytes: limit + 1)
        sim.run(for: .milliseconds(10))
        let status = try #require(sim.status(of: appA))
        #expect(status.pid == nil)
        #expect(status.lastTermination?.reason == .memoryLimitExceeded(megabytes: 64))
        #expect(status.lastTermination?.summary == "exceeded its memory limit of 64 MB (killed by signal 9)")
        #expect(sim.log.contains { $0.app == appA && $0.kind == .kill && $0.message == "exceeded its memory limit of 64 MB (SIGKILL)" })
    }

    @Test("MEM-2: an app the core was already ending keeps the core's reason, whatever the shell says of its exit")
    func coreReasonWins() throws {
        let sim = try Self.running()
        let pid = try #require(sim.status(of: appA)?.pid)
        var core = sim.core
        _ = try core.forceQuit(appA, at: sim.now)
        _ = core.processExited(appA, pid: pid, status: .signaled(9), outOfMemory: true, at: sim.now)
        #expect(core.apps[appA]?.durable.lastTermination?.reason == .forceQuit)
    }

    @Test("MEM-2: the group's out-of-memory count is the limit's kill only with a SIGKILL or an unseen status, and only for an app with a limit")
    func outOfMemoryNeedsSigkillAndLimit() throws {
        // A (64 MB) in front, B (no limit) suspended.
        let core = try Self.running().core
        #expect(core.limitKill(appA, .signaled(9)) == .memoryLimitExceeded(megabytes: 64))
        #expect(core.limitKill(appA, .unknown) == .memoryLimitExceeded(megabytes: 64))
        #expect(core.limitKill(appA, .signaled(11)) == nil, "a crash stays a crash")
        #expect(core.limitKill(appA, .exited(0)) == nil)
        #expect(core.limitKill(appB, .signaled(9)) == nil)
    }

    @Test("MEM-2: the limit in bytes is MiB × 1,048,576, and the largest a manifest may give (1 TiB) does not overflow")
    func limitBytes() {
        #expect(Self.limited(appA, megabytes: 48).linux.memoryLimitBytes == 50_331_648)
        #expect(Self.limited(appA, megabytes: Manifest.LinuxSettings.maximumMemoryLimitMB).linux.memoryLimitBytes == 1 << 40)
        #expect(Self.limited(appA, megabytes: nil).linux.memoryLimitBytes == nil)
    }

    @Test("MEM-2: with a background limit (memory.backgroundLimitMB) an app out of front is held to the smaller of it and its manifest's; in front to its manifest's alone; over it, it is ended with 'exceeded its background memory limit', its last exit says so")
    func backgroundLimit() throws {
        var configuration = CoreConfiguration()
        configuration.memory.backgroundLimitMB = 32
        var sim = Simulation(configuration: configuration)
        sim.install(Self.limited(appA, megabytes: 64), behavior: .init())
        sim.install(Self.limited(appB, megabytes: nil), behavior: .init())
        sim.install(Self.limited(appC, megabytes: 16), behavior: .init())
        let inFront: [AppID: MemoryLimit?] = [appA: MemoryLimit(megabytes: 64, inBackground: false), appB: nil, appC: MemoryLimit(megabytes: 16, inBackground: false)]
        for id in [appA, appB, appC] {
            try sim.openAndSettle(id)
            #expect(sim.core.memoryLimit(of: id) == inFront[id]!, "\(id) in front: its manifest's limit alone")
            sim.home()
            sim.run(for: .seconds(30))
        }
        #expect(sim.core.memoryLimit(of: appA) == MemoryLimit(megabytes: 32, inBackground: true))
        #expect(sim.core.memoryLimit(of: appB) == MemoryLimit(megabytes: 32, inBackground: true))
        #expect(sim.core.memoryLimit(of: appC) == MemoryLimit(megabytes: 16, inBackground: false), "its own limit is smaller")
        try sim.openAndSettle(appA)
        #expect(sim.core.memoryLimit(of: appA) == MemoryLimit(megabytes: 64, inBackground: false))
        try sim.openAndSettle(appB)
        #expect(sim.core.memoryLimit(of: appB) == nil, "in front, no limit but its manifest's")
        // B out of front again, read over 32 MB: ended with the background limit's reason.
        sim.home()
        sim.run(for: .seconds(1))
        sim.memoryRead(of: appB, bytes: 40 << 20)
        let record = try #require(sim.status(of: appB)?.lastTermination)
        #expect(record.summary == "exceeded its background memory limit of 32 MB (killed by signal 9)")
        // The kernel's kill of an app out of front says the same.
        sim.memoryLimitKill(of: appA)
        #expect(sim.status(of: appA)?.lastTermination?.reason == .backgroundMemoryLimitExceeded(megabytes: 32))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(MemoryResponseSettings.self, from: Data(#"{"backgroundLimitMB": 0}"#.utf8))
        }
        let decoded = try JSONDecoder().decode(MemoryResponseSettings.self, from: Data(#"{"backgroundLimitMB": 48}"#.utf8))
        #expect(decoded.backgroundLimitMB == 48 && MemoryResponseSettings().backgroundLimitMB == nil)
    }
}
