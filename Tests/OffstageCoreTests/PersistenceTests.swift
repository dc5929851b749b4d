import Foundation
import OffstageCore
import OffstageSimulator
import Testing

@Suite("Scheduled work survives restarts (SPEC SCH-10)")
struct PersistenceTests {
    @Test("SCH-10: pending requests, the fetch interval, usage history, results and budgets round-trip through the store's encoding")
    func durableStateRoundTrips() throws {
        var tasks = TaskBehavior()
        tasks.fetchIntervalOnLaunch = .seconds(3_600)
        tasks.submitsOnLaunch = [.init(refreshID, earliestAfter: .seconds(600))]
        var sim = Simulation()
        try sim.setConditions(ConditionOverrides(charging: false))
        sim.install(schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks, tasks))
        try sim.openAndSettle(refreshApp)
        sim.home()
        sim.run(for: .seconds(30))
        let durable = try #require(sim.core.durableState(of: refreshApp))
        #expect(durable.schedule.requests[refreshID] != nil)
        func roundTrip(_ state: AppDurableState) throws -> AppDurableState {
            try JSONDecoder().decode(AppDurableState.self, from: JSONEncoder().encode(state))
        }
        // Instants are stored as seconds in a Double (readable, as the CLI prints them): ~0.2 µs of precision today.
        let decoded = try roundTrip(durable)
        #expect(try roundTrip(decoded) == decoded, "stable after one round trip")
        func close(_ a: Instant?, _ b: Instant?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return abs((a - b).inSeconds) < 1e-6
        }
        let (before, after) = (durable.schedule, decoded.schedule)
        #expect(after.requests.keys.sorted() == before.requests.keys.sorted())
        #expect(close(after.requests[refreshID]?.earliestBegin, before.requests[refreshID]?.earliestBegin))
        #expect(after.fetchInterval == .seconds(3_600) && close(after.lastFetchAt, before.lastFetchAt))
        #expect(after.usage.hourlyOpens == before.usage.hourlyOpens && after.usage.totalOpens == 1)
        #expect(close(after.usage.lastOpen, before.usage.lastOpen) && close(after.usage.lastLeft, before.usage.lastLeft))
        #expect(after.results.counts == before.results.counts && close(after.results.lastRefreshAt, before.results.lastRefreshAt))
        #expect(after.budget.day == before.budget.day && abs(after.budget.used - before.budget.used) < 1e-9)
        #expect(before.budget.used > 0, "the refresh ran on battery and was counted")
    }

    @Test("SCH-10: a run in progress when the daemon stopped is pending again after the restart, not lost")
    func startedRunsArePendingAgain() throws {
        var tasks = TaskBehavior()
        tasks.runtime = .seconds(20)
        var sim = Simulation()
        sim.lock()
        sim.install(schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks, tasks), pending: [refreshSubmission])
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(1))
        let saved = try #require(sim.core.durableState(of: refreshApp))
        #expect(saved.schedule.requests.isEmpty && saved.schedule.started[refreshID] != nil, "running, not pending")
        // A new core reads the app back, as the daemon does after a crash.
        var restarted = OffstageCore()
        let app = try #require(sim.core.apps[refreshApp]?.app)
        restarted.restore(app, durable: try JSONDecoder().decode(AppDurableState.self, from: JSONEncoder().encode(saved)))
        let pending = try restarted.tasks(of: refreshApp, at: sim.now)
        #expect(pending.map(\.identifier) == [refreshID] && pending.first?.state == .pending)
    }

    @Test("SCH-10: state saved before the scheduler existed still loads, with nothing scheduled")
    func olderStateLoads() throws {
        let old = #"{"forceQuit":true,"crashLoop":{"consecutiveCrashes":0}}"#
        let decoded = try JSONDecoder().decode(AppDurableState.self, from: Data(old.utf8))
        #expect(decoded.forceQuit && decoded.schedule.requests.isEmpty && decoded.schedule.fetchInterval == .never)
        let device = try JSONDecoder().decode(DeviceState.self, from: Data(#"{"locked":true,"settings":{"multitaskingSupported":false}}"#.utf8))
        #expect(device.locked && !device.settings.multitaskingSupported && device.settings.backgroundRefresh)
    }
}
