import Foundation
import Glibc
import OffstageCore
import Synchronization
import Testing

@testable import OffstageDaemon

/// What wakes the daemon to read memory pressure, and how a reading is graded (SPEC MEM-1): the share of time stalled
/// since an earlier reading, the app memory budget, and the kernel's wake-ups (PSI triggers, the budget's usage
/// thresholds), against the real kernel where this machine lets the tests use them.
@Suite("Memory pressure: recent stalls, the app memory budget and the kernel's wake-ups (SPEC MEM-1)")
struct MemoryWakeUpTests {
    static func psi(some: UInt64, full: UInt64? = nil, avg10: Double = 0) -> MemoryPressureReader.PSI {
        let line = { (total: UInt64) in MemoryPressureReader.PSILine(avg10: avg10, avg60: 0, avg300: 0, total: total) }
        return MemoryPressureReader.PSI(some: line(some), full: full.map(line))
    }

    @Test("MEM-1: the share of time stalled since a reading 1 to 10 s back is what memory did lately; without one (the first, or only younger or older ones) avg10 is used")
    func recentShareOfStalls() throws {
        let samples = PSISamples()
        let start = ContinuousClock.now
        #expect(samples.recent(Self.psi(some: 1_000_000, full: 0), at: start) == nil, "a first reading has nothing to compare")
        // 0.5 s of stalls in 2 s: 25 %; of every task, 0.1 s: 5 %.
        let later = try #require(samples.recent(Self.psi(some: 1_500_000, full: 100_000), at: start + .seconds(2)))
        #expect(abs(later.some - 25) < 0.001 && abs((later.full ?? -1) - 5) < 0.001, "\(later)")
        // 0.1 s on: the reading 2 s back is still the newest one at least 1 s old (the 0.1 s one says too little).
        let soon = try #require(samples.recent(Self.psi(some: 1_500_000, full: 100_000), at: start + .milliseconds(2_100)))
        #expect(abs(soon.some - 500_000 / 2_100_000 * 100) < 0.001, "\(soon)")
        // After a relief the share falls at once, where avg10 would lag: nothing stalled in the last 1.5 s.
        let relieved = try #require(samples.recent(Self.psi(some: 1_500_000, full: 100_000), at: start + .milliseconds(3_600)))
        #expect(relieved.some == 0 && relieved.full == 0)
        #expect(samples.recent(Self.psi(some: 1_600_000), at: start + .seconds(30)) == nil, "every earlier reading is over 10 s old")
        // A counter that went back (a new boot's file, a fixture) is no share.
        #expect(samples.recent(Self.psi(some: 10), at: start + .seconds(32)) == nil)
        let settings = MachinePressureSettings()
        #expect(MemoryPressureReader.level(recentShare: (some: 5, full: 0), settings) == .normal)
        #expect(MemoryPressureReader.level(recentShare: (some: 25, full: 5), settings) == .warning)
        #expect(MemoryPressureReader.level(recentShare: (some: 45, full: 5), settings) == .critical)
        #expect(MemoryPressureReader.level(recentShare: (some: 15, full: 12), settings) == .critical)
    }

    @Test("MEM-1: the app memory budget grades the apps' usage (a warning from budgetWarning %, critical from budgetCritical %); the reader takes the higher of it and the machine; a trigger's floor holds")
    func budgetGradesUsage() throws {
        try SysfsFixture.with { fixture in
            let usage = fixture.root + "/memory.usage_in_bytes"
            let idle = fixture.root + "/memory"
            try "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n".write(toFile: idle, atomically: false, encoding: .utf8)
            let budget = MemoryBudget(limitBytes: 100 << 20, warningPercent: 60, criticalPercent: 80, usagePath: usage)
            #expect(budget.warningBytes == 60 << 20 && budget.criticalBytes == 80 << 20)
            #expect(budget.level(usage: (60 << 20) - 1) == .normal)
            #expect(budget.level(usage: 60 << 20) == .warning)
            #expect(budget.level(usage: 80 << 20) == .critical)
            #expect(budget.description == "100 MB (warning from 60 MB, critical from 80 MB) on \(usage)")
            let reader = MemoryPressureReader(psiPath: idle, meminfoPath: nil).with(budget: budget)
            let unreadable = reader.reading()
            #expect(unreadable.level == .normal && unreadable.source.hasSuffix("(unreadable)"), "\(unreadable)")
            try "\(70 << 20)\n".write(toFile: usage, atomically: false, encoding: .utf8)
            #expect(reader.read() == .warning)
            #expect(reader.reading().source.contains("and the app memory budget of 100 MB"))
            try "\(90 << 20)\n".write(toFile: usage, atomically: false, encoding: .utf8)
            #expect(reader.read() == .critical)
            try "\(10 << 20)\n".write(toFile: usage, atomically: false, encoding: .utf8)
            #expect(reader.read() == .normal)
            #expect(reader.read(floor: .warning) == .warning, "a PSI trigger that fired says at least a warning")
            #expect(MemoryPressureReader(psiPath: nil, meminfoPath: nil).read(floor: .critical) == .critical)
        }
    }

    @Test("MEM-1: a wake-up makes the watcher read memory pressure at once and hand on the change; its eventfd is drained, so one signal is one reading")
    func watcherReadsOnWakeUp() throws {
        try SysfsFixture.with { fixture in
            let psi = fixture.root + "/memory"
            try "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n".write(toFile: psi, atomically: false, encoding: .utf8)
            let eventfd = try Syscalls.live.eventfdCreate()
            let readings = Mutex<[MemoryPressure?]>([])
            let watcher = try MachineConditionsWatcher(
                reader: MachineConditionsReader(
                    power: PowerSupplyReader(root: fixture.root), network: NetworkReader(root: fixture.root, addresses: .notRequired),
                    memory: MemoryPressureReader(psiPath: psi, meminfoPath: nil)),
                pressurePollInterval: nil, wakeUps: [PressureWakeUp(fd: eventfd, kind: .counter, source: "test")],
                onChange: { reading in readings.withLock { $0.append(reading.memoryPressure) } })
            defer { watcher.shutdown() }
            #expect(watcher.current.memoryPressure == .normal)
            try "some avg10=23.00 avg60=0.00 avg300=0.00 total=900000\n".write(toFile: psi, atomically: false, encoding: .utf8)
            #expect(watcher.pressureWakeUpCount == 0, "a file changing alone is not noticed")
            Syscalls.live.eventfdSignal(eventfd)
            #expect(ProcessFixtures.eventually { readings.withLock { $0 } == [.warning] })
            #expect(watcher.pressureWakeUpCount == 1)
            #expect(watcher.pressureReadCount == 0, "no poll: the wake-up read it")
        }
    }

    @Test("MEM-1: a PSI trigger names the file it could not be set on; the machine's triggers go on the first pressure file that takes them, or say why none does")
    func psiTriggers() throws {
        #expect(throws: ProcessControlError.self) {
            _ = try PressureWakeUp.psiTrigger(path: "/nonexistent/memory.pressure", percent: 10, floor: .warning)
        }
        do {
            _ = try PressureWakeUp.psiTrigger(path: "/nonexistent/memory.pressure", percent: 10, floor: .warning)
        } catch {
            #expect("\(error)".contains("/nonexistent/memory.pressure"))
        }
        let none = PressureWakeUp.machine(.init(), psiPath: "/nonexistent/pressure", mounts: CgroupMounts(unified: nil, freezer: nil))
        #expect(none.wakeUps.isEmpty && none.problem?.contains("/nonexistent/pressure") == true, "\(none)")
        // This machine: where a pressure file takes triggers, three are set (some for a warning and critical, full for
        // critical), each ready only when the kernel says; closed, they are gone.
        let machine = PressureWakeUp.machine(.init(), psiPath: MemoryPressureReader.systemPSI, mounts: .current())
        defer { machine.wakeUps.forEach { Syscalls.live.close($0.fd) } }
        if machine.wakeUps.isEmpty {
            #expect(machine.problem?.isEmpty == false)
        } else {
            #expect(machine.wakeUps.map(\.kind) == [.psiTrigger(floor: .warning), .psiTrigger(floor: .critical), .psiTrigger(floor: .critical)])
            #expect(machine.wakeUps.allSatisfy { $0.pollEvents == Int16(POLLPRI) && $0.source.hasPrefix("PSI triggers on ") })
        }
    }

    @Test(
        "MEM-1: the budget is the limit of the group of every app; the kernel signals its eventfd when the apps' usage crosses a threshold, up and down; no budget removes a previous one",
        .enabled(if: MemoryCgroupsTests.usable, MemoryCgroupsTests.unusable))
    func budgetThresholdsWakeTheDaemon() throws {
        let cgroups = try MemoryCgroupsTests.make()
        defer { cgroups.removeAll() }
        let budget = try #require(try cgroups.applyBudget(megabytes: 256, warningPercent: 10, criticalPercent: 30))
        let instance = cgroups.hierarchy.instancePath
        let limitFile = cgroups.version == .cgroupV1 ? "memory.limit_in_bytes" : "memory.max"
        #expect(try Syscalls.live.readFile(instance + "/" + limitFile).hasPrefix("\(256 << 20)"))
        guard cgroups.version == .cgroupV1 else { return }
        #expect(try Syscalls.live.readFile(instance + "/memory.use_hierarchy").hasPrefix("1"))
        let wakeUp = try cgroups.budgetWakeUp(budget)
        defer { Syscalls.live.close(wakeUp.fd) }
        #expect(wakeUp.kind == .counter && wakeUp.source.hasPrefix("usage thresholds on"))
        func signalled(within seconds: Int32) -> Bool {
            var entry = pollfd(fd: wakeUp.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, seconds * 1000) == 1 else { return false }
            Syscalls.live.eventfdDrain(wakeUp.fd)
            return true
        }
        let procs = try cgroups.prepare(app: "com.example.grows", limitBytes: nil)
        try withHarness(.signalStop) { harness in
            // 40 MiB crosses the warning threshold (25.6 MiB), not the critical one (76.8 MiB).
            let process = try harness.spawn(MemoryCgroupsTests.allocating(40, join: procs), app: "com.example.grows")
            #expect(signalled(within: 10), "the crossing up wakes the daemon")
            #expect(budget.read() == .warning)
            try Syscalls.live.kill(process.leader, SIGKILL)
            #expect(signalled(within: 10), "the crossing down too")
            #expect(ProcessFixtures.eventually { budget.read() == .normal })
        }
        #expect(try cgroups.applyBudget(megabytes: nil, warningPercent: 10, criticalPercent: 30) == nil)
        #expect(try Syscalls.live.readFile(instance + "/memory.limit_in_bytes").hasPrefix("9223372036854"), "no limit")
    }
}
