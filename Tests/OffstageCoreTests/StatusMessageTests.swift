import OffstageCore
import OffstageSimulator
import Testing

@Suite("What status and explain say (SPEC CLI-2, SCH-8)")
struct StatusMessageTests {
    @Test("BT-3, CLI-2: background time remaining is shown while the app runs in the background, not once suspended")
    func remainingOnlyWhileRunningInBackground() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        #expect(sim.status(of: appA)?.backgroundTimeRemaining == nil, "in the foreground the budget does not apply")
        sim.home()
        sim.run(for: .milliseconds(100))
        #expect(sim.status(of: appA)?.backgroundTimeRemaining.map { $0 > 29 } == true)
        sim.run(for: .seconds(3))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.status(of: appA)?.backgroundTimeRemaining == nil)
    }

    @Test("SCH-8: explain leaves out a legacy fetch the app never turned on, unless asked or there is nothing else")
    func explainLeavesOutUnusedFetch() throws {
        var sim = Simulation()
        sim.lock()
        sim.install(schedulingManifest(refreshApp), behavior: AppBehavior(), pending: [refreshSubmission])
        #expect(try sim.explain(refreshApp).map(\.identifier) == [refreshID])
        let fetch = try #require(try sim.explain(refreshApp, TaskRequest.fetchIdentifier).first)
        #expect(fetch.summary.contains("legacy background fetch is not in use"))
        sim.install(schedulingManifest(newsApp), behavior: AppBehavior())
        #expect(try sim.explain(newsApp).map(\.identifier) == [TaskRequest.fetchIdentifier], "nothing else to explain")
    }

    @Test("LC-2: the log says background after will-resign-active has been sent, and before did-enter-background")
    func backgroundLoggedInCallbackOrder() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let start = sim.log.count
        sim.home()
        sim.run(for: .milliseconds(100))
        let lines = sim.log[start...].filter { $0.app == appA && ($0.kind == .state || $0.kind == .callback) }
            .map { "\($0.kind.rawValue): \($0.message)" }
        #expect(Array(lines.prefix(3)) == ["callback: will-resign-active", "state: background", "callback: did-enter-background"])
    }
}
