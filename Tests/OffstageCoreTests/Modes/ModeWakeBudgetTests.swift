import OffstageCore
import OffstageSimulator
import Testing

/// SPEC BT-3 with MODE-2 and MODE-4: an app the system wakes in the background for a mode's event "may begin a
/// background task for more" — so each such wake starts a fresh budget, however long the app was suspended before.
@Suite("A mode's wake gives a fresh background-task budget (SPEC BT-3, MODE-4)")
struct ModeWakeBudgetTests {
    @Test("MODE-4, BT-3: woken for its accessory ten minutes after leaving, the app's background task has its full time")
    func accessoryWakeStartsAFreshBudget() throws {
        let path = "/dev/serial/by-id/usb-scanner"
        let scanner = AppBehavior()
            .on("didFinishLaunching", .registerAccessory(name: "scanner", path: path, mode: .externalAccessory))
            .on("accessory", .beginTask(name: "finish", endAfter: .seconds(20)))
        var sim = Simulation()
        sim.install(manifest(appA, modes: [.externalAccessory]), behavior: scanner)
        try sim.openThenSuspend(appA)
        sim.run(for: .seconds(600))
        #expect(sim.state(of: appA) == .suspended)

        sim.plugAccessory(at: path)
        sim.run(for: .milliseconds(100))
        let remaining = try #require(sim.core.apps[appA]?.process?.ledger.timeRemaining(at: sim.now))
        #expect(approximately(remaining, 30, within: 0.2), "a fresh 30 s budget, not the one that ended at 30 s")
        let began = sim.trace(of: appA).compactMap { record -> BackgroundTaskID? in
            if case .taskBegan("finish", let id) = record.event { id } else { nil }
        }
        #expect(began.count == 1 && began.first != .invalid, "\(began)")
        sim.run(for: .seconds(60))
        #expect(sim.trace(of: appA).contains { $0.event == .taskEnded("finish") })
        #expect(!sim.trace(of: appA).contains { $0.event == .sigkill || $0.event == .sigterm }, "ended in time")
        #expect(sim.state(of: appA) == .suspended)
    }
}
