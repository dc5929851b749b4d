@testable import OffstageCore
import OffstageSimulator
import Testing

/// Where each running app stands when memory is short (SPEC MEM-1, SET-2): its band, decided by the core from what the
/// app is doing, and the order apps would be ended in.
@Suite("Memory bands and the order apps are ended (SPEC MEM-1)")
struct MemoryBandTests {
    let start = Instant(secondsSinceEpoch: 1_800_000_000)

    func standing(_ id: AppID, _ band: MemoryBand, kept: Bool = false, used seconds: Int64) -> MemoryStanding {
        MemoryStanding(app: id, band: band, keptInMemory: kept, lastUsed: start + .seconds(seconds))
    }

    @Test("MEM-1, SET-2: suspended apps go first, least recently used first; then background work, background for the user, apps kept in memory; the app in front last")
    func endingOrder() {
        let standings = [
            standing("com.example.front", .foreground, used: 0),
            standing("com.example.kept", .suspended, kept: true, used: 1),
            standing("com.example.music", .backgroundUser, used: 2),
            standing("com.example.sync", .backgroundWork, used: 3),
            standing("com.example.recent", .suspended, used: 50),
            standing("com.example.old", .suspended, used: 10),
            standing("com.example.keptMusic", .backgroundUser, kept: true, used: 0),
            standing("com.example.frontKept", .foreground, kept: true, used: -5),
        ]
        let order = MemoryStanding.endingOrder(standings.reversed()).map(\.app.rawValue)
        #expect(order == [
            "com.example.old", "com.example.recent", "com.example.sync", "com.example.music", "com.example.kept",
            "com.example.keptMusic", "com.example.frontKept", "com.example.front",
        ])
        #expect(MemoryStanding.endingOrder(standings) == MemoryStanding.endingOrder(standings.shuffled()), "one order, whatever the input order")
    }

    @Test("MEM-1: equal standings are ordered by app id, so the order is the same on every run")
    func ties() {
        let order = MemoryStanding.endingOrder([standing("com.example.b", .suspended, used: 5), standing("com.example.a", .suspended, used: 5)])
        #expect(order.map(\.app) == ["com.example.a", "com.example.b"])
        #expect(MemoryBand.allCases.sorted() == [.suspended, .backgroundWork, .backgroundUser, .foreground])
    }

    @Test("MEM-1, SET-2: the core puts the app in front, a player, an app finishing a task and suspended apps in their bands, the least recently used suspended app first")
    func bandsFromTheCore() throws {
        let player: AppID = "com.example.player"
        let worker: AppID = "com.example.worker"
        var sim = Simulation()
        sim.install(manifest(player, modes: [.audio]), behavior: AppBehavior().on("didBecomeActive", .playAudio(.playback, mixWithOthers: false, stopAfter: nil)))
        sim.install(manifest(worker), behavior: AppBehavior().on("didEnterBackground", .beginTask(name: "save", endAfter: .seconds(25))))
        sim.install(manifest(appA), behavior: .init())
        sim.install(manifest(appB), behavior: .init())
        #expect(sim.core.memoryEndingOrder(at: sim.now).isEmpty, "no process, no standing")
        #expect(sim.status(of: appA)?.memoryBand == nil && sim.status(of: appA)?.memoryEndingRank == nil)

        // A is used first, then B: both suspended, A less recently used.
        for id in [appA, appB] {
            try sim.openAndSettle(id)
            sim.home()
            sim.run(for: .seconds(30))
        }
        try sim.openAndSettle(player)
        sim.home()
        sim.run(for: .seconds(1))
        try sim.openAndSettle(worker)
        sim.home()
        sim.run(for: .seconds(1))
        try sim.open(appB)
        sim.run(for: .seconds(1))

        #expect(sim.core.memoryBand(of: appB, at: sim.now) == .foreground)
        #expect(sim.core.memoryBand(of: player, at: sim.now) == .backgroundUser)
        #expect(sim.core.memoryBand(of: worker, at: sim.now) == .backgroundWork)
        #expect(sim.core.memoryBand(of: appA, at: sim.now) == .suspended)
        #expect(sim.core.memoryEndingOrder(at: sim.now).map(\.app) == [appA, worker, player, appB])
        let status = try #require(sim.status(of: worker))
        #expect(status.memoryBand == .backgroundWork && status.memoryEndingRank == 2)

        // Kept in memory: A goes last among the apps out of front, behind the player.
        var settings = try #require(sim.core.apps[appA]?.app.settings)
        settings.keptInMemory = true
        try sim.setAppSettings(settings, for: appA)
        #expect(sim.core.memoryEndingOrder(at: sim.now).map(\.app) == [worker, player, appA, appB])
        #expect(sim.status(of: appA)?.keptInMemory == true)

        // The task ends: the worker is suspended, and more recently used than A.
        sim.run(for: .seconds(30))
        #expect(sim.core.memoryBand(of: worker, at: sim.now) == .suspended)
        #expect(sim.core.memoryEndingOrder(at: sim.now).map(\.app) == [worker, player, appA, appB])
    }
}
