import OffstageCore
import OffstageSimulator
import Testing

/// `offstage explain` shows an app's transfers beside its scheduled work (SPEC SCH-8, TR-4, TR-5), on virtual time.
@Suite("Background transfers: explain (SPEC SCH-8)")
struct TransferExplainTests {
    @Test("SCH-8, TR-4: explain gives each transfer of the app with where it stands; a waiting one names its holds and their controllers")
    func explainsEachTransfer() throws {
        var (sim, ids) = try Simulation.withDownloads(
            ["https://files.example.com/a.bin", "https://files.example.com/b.bin", "https://files.example.com/c.bin"],
            sizes: [
                "https://files.example.com/a.bin": 1 << 40, "https://files.example.com/b.bin": 1 << 40,
                "https://files.example.com/c.bin": 1 << 40,
            ])
        try #require(ids.count == 3)
        sim.endAttempt(ids[1], .transient("connection reset", retryAfter: nil))
        try sim.input { core, now throws(CoreError) in try core.changeTransfer(ids[2], .pause, app: nil, at: now) }
        let explained = try sim.core.explainTransfers(appA, at: sim.now)
        #expect(explained.map(\.task.id) == ids, "every transfer of the app, oldest first")
        #expect(explained.map(\.task.state) == [.running, .waiting, .paused])
        #expect(explained[0].holds.isEmpty && explained[0].summary.hasPrefix("running: "), "\(explained[0].summary)")
        #expect(explained[1].holds.map(\.controller) == ["retry"])
        #expect(explained[1].summary == "waiting: " + explained[1].holds.map(\.description).joined(separator: "; "))
        #expect(explained[2].holds.isEmpty)
        #expect(explained[2].summary.contains("`offstage transfers resume \(ids[2])`"), "\(explained[2].summary)")
        #expect(try sim.core.explainTransfers(appB, at: sim.now).isEmpty, "another app's transfers are not shown")
    }

    @Test("SCH-8: a waiting transfer without a hold says it waits for a slot; a finished one that its app has not heard of says so")
    func slotsAndUnheardEvents() throws {
        var configuration = CoreConfiguration()
        configuration.transfers.maximumRunningPerApp = 1
        var (sim, ids) = try Simulation.withDownloads(
            ["https://files.example.com/a.bin", "https://files.example.com/b.bin"], configuration: configuration,
            session: TransferSessionConfiguration(sendsLaunchEvents: false), sizes: ["https://files.example.com/a.bin": 1 << 40, "https://files.example.com/b.bin": 1 << 40])
        let second = try #require(try sim.core.explainTransfers(appA, at: sim.now).last)
        #expect(second.task.state == .waiting && second.holds.isEmpty)
        #expect(second.summary == "waiting: the app has 1 transfers running, its most at once", "\(second.summary)")
        // Suspended, with a session that does not wake it: the app hears of the end only when it opens the session.
        sim.home()
        sim.run(for: .seconds(120))
        #expect(sim.core.apps[appA]?.process?.phase.isForeground == false)
        sim.endAttempt(ids[0], .permanent(status: 404, "Not Found"))
        sim.run(for: .seconds(1))
        let failed = try #require(try sim.core.explainTransfers(appA, at: sim.now).first)
        #expect(failed.task.id == ids[0])
        #expect(failed.task.state == .failed)
        #expect(failed.summary.hasPrefix("failed: ") && failed.summary.hasSuffix("or is woken for it"), "\(failed.summary)")
    }

    @Test("SCH-8 bad input: explain of an app that is not installed is refused, naming it")
    func unknownApp() {
        let sim = makeSimulation()
        #expect(throws: CoreError.self) { try sim.core.explainTransfers("com.example.missing", at: sim.now) }
    }
}
