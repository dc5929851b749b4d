import Foundation
@testable import OffstageCore
import OffstageSimulator
import Testing

/// The simulator's model of the device's memory (SPEC MEM-1, MEM-2): each app takes its memory, the app in front grows,
/// and the same core answers on virtual time, so a trace shows which apps a smaller device would lose.
@Suite("Memory on a simulated device: which apps a smaller device loses (SPEC MEM-1, MEM-2)")
struct SimulatedMemoryTests {
    static let kept: AppID = "com.example.kept"
    static let front: AppID = "com.example.slideshow"
    static let suspended: [AppID] = [appA, appB, appC]

    /// Four apps of 100 MiB used and suspended (the one kept in memory first), then a slideshow in front that grows by
    /// 20 MiB a second to 460 MiB and lets go of nothing when warned.
    static func device(_ memory: VirtualMemory) throws -> Simulation {
        var sim = Simulation()
        for id in [kept] + suspended {
            sim.install(manifest(id), behavior: AppBehavior().with(\.memory, MemoryBehavior(launchMB: 100)))
        }
        sim.install(
            manifest(front),
            behavior: AppBehavior().with(
                \.memory, MemoryBehavior(launchMB: 50, growthMBPerSecondInFront: 20, freedOnWarning: 0, maximumMB: 460)))
        var settings = AppSettings()
        settings.keptInMemory = true
        try sim.setAppSettings(settings, for: kept)
        sim.enableMemory(memory)
        for id in [kept] + suspended {
            try sim.openAndSettle(id)
            sim.home()
            sim.run(for: .seconds(5))
        }
        try sim.openAndSettle(front)
        return sim
    }

    @Test("MEM-1, SET-2: on a 600 MB device the growing app in front pushes the suspended apps out least recently used first, the one kept in memory last, each recorded with its memory; it survives; on a 2 GB device nobody is lost")
    func smallerDeviceLosesSuspendedApps() throws {
        var small = try Self.device(VirtualMemory(deviceMB: 600))
        small.run(for: .seconds(60))
        #expect(small.endedForMemory == Self.suspended + [Self.kept])
        #expect(small.state(of: Self.front) == .active)
        let reasons = small.log.filter { $0.kind == .kill && $0.message.hasPrefix("ended for memory") }.map(\.message)
        #expect(reasons.allSatisfy { $0.hasPrefix("ended for memory (pressure critical): suspended, 100 MB") }, "\(reasons)")
        // The answer waited for the warning's grace, and the device never ran out: the peak stayed under its memory.
        let memory = try #require(small.virtualMemory)
        #expect(memory.peakMB < 600 && memory.usedMB == 460, "\(memory.peakMB), \(memory.usedMB)")
        #expect(small.callbacks(of: Self.front).contains("memoryWarning"))
        #expect(!small.callbacks(of: appA).contains("memoryWarning"), "a suspended app hears nothing")

        var large = try Self.device(VirtualMemory(deviceMB: 2_048))
        large.run(for: .seconds(60))
        #expect(large.endedForMemory.isEmpty)
        #expect(large.virtualMemory?.usedMB == 860)
    }

    @Test("MEM-1: an app in front that lets go of what it took when warned keeps the device out of critical pressure: nobody is ended, however long it grows")
    func warningThatFreesEndsNobody() throws {
        var sim = Simulation()
        for id in Self.suspended.prefix(2) {
            sim.install(manifest(id), behavior: AppBehavior().with(\.memory, MemoryBehavior(launchMB: 100)))
        }
        sim.install(
            manifest(Self.front),
            behavior: AppBehavior().with(\.memory, MemoryBehavior(launchMB: 20, growthMBPerSecondInFront: 40, freedOnWarning: 1)))
        sim.enableMemory(VirtualMemory(deviceMB: 300))
        for id in Self.suspended.prefix(2) {
            try sim.openAndSettle(id)
            sim.home()
        }
        try sim.openAndSettle(Self.front)
        sim.run(for: .seconds(120))
        #expect(sim.endedForMemory.isEmpty)
        let warnings = sim.callbacks(of: Self.front).filter { $0 == "memoryWarning" }.count
        #expect(warnings >= 10, "warned each time it filled up again: \(warnings)")
        #expect((sim.virtualMemory?.peakMB ?? 0) < 270, "never critical")
    }

    @Test("MEM-2: an app that grows past its manifest's limit is ended as the kernel would end it, and its last exit says so")
    func limitEndsAGrowingApp() throws {
        var sim = Simulation()
        var limited = manifest(Self.front)
        limited.linux.memoryLimitMB = 64
        sim.install(limited, behavior: AppBehavior().with(\.memory, MemoryBehavior(launchMB: 20, growthMBPerSecondInFront: 20)))
        sim.enableMemory(VirtualMemory(deviceMB: 4_096))
        try sim.openAndSettle(Self.front)
        sim.run(for: .seconds(5))
        #expect(sim.state(of: Self.front) == .notRunning)
        #expect(sim.status(of: Self.front)?.lastTermination?.summary.hasPrefix("exceeded its memory limit of 64 MB") == true)
        #expect(sim.virtualMemory?.megabytes.isEmpty == true, "its memory went with it")
    }
}
