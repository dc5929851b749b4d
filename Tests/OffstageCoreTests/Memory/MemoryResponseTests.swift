import Foundation
@testable import OffstageCore
import OffstageSimulator
import Testing

/// The system's answer to memory pressure on virtual time (SPEC MEM-1): the running apps are warned; if memory stays
/// short past their grace, apps are ended without a callback in the ending order — suspended ones least recently used
/// first, the app in front last — one at a time, each only once a reading taken after the previous one still says
/// memory is short; relief stops it. Every app ended is recorded with its band, its memory and the pressure.
@Suite("The answer to memory pressure: warnings, then apps ended in order (SPEC MEM-1)")
struct MemoryResponseTests {
    static let music: AppID = "com.example.music"
    static let front: AppID = "com.example.front"

    /// A and B used in that order and suspended; the player playing in the background; `front` in front.
    static func device(configuration: CoreConfiguration = .init()) throws -> Simulation {
        var sim = Simulation(configuration: configuration)
        sim.install(manifest(appA), behavior: .init())
        sim.install(manifest(appB), behavior: .init())
        sim.install(
            manifest(music, modes: [.audio]),
            behavior: AppBehavior().on("didBecomeActive", .playAudio(.playback, mixWithOthers: false, stopAfter: nil)))
        sim.install(manifest(front), behavior: .init())
        for id in [appA, appB, music] {
            try sim.openAndSettle(id)
            sim.home()
            sim.run(for: .seconds(30))
        }
        try sim.openAndSettle(front)
        #expect(sim.status(of: appA)?.state == .suspended && sim.status(of: appB)?.state == .suspended)
        #expect(sim.status(of: music)?.state == .background)
        sim.measureMemory([appA: 40 << 20, appB: 30 << 20, music: 20 << 20, front: 100 << 20])
        return sim
    }

    static func warnings(_ sim: Simulation, _ id: AppID) -> Int {
        sim.trace.filter { $0.app == id && $0.event == .callback("memoryWarning") }.count
    }

    static func endedForMemory(_ sim: Simulation) -> [AppID] {
        sim.log.filter { $0.kind == .kill && $0.message.hasPrefix("ended for memory") }.compactMap(\.app)
    }

    @Test("MEM-1: memory turning short warns every running app — not a suspended one — and ends nobody within the grace; back to normal, the relief is logged")
    func warningsFirst() throws {
        var sim = try Self.device()
        sim.machineReading(MachineReading(memoryPressure: .warning))
        sim.run(for: .milliseconds(100))
        #expect(Self.warnings(sim, Self.front) == 1 && Self.warnings(sim, Self.music) == 1)
        #expect(Self.warnings(sim, appA) == 0 && Self.warnings(sim, appB) == 0, "suspended apps hear nothing")
        #expect(sim.log.contains { $0.kind == .device && $0.message == "memory warning (memory pressure warning) for 2 running app(s)" })
        // Critical is a rise: warned again, and the grace starts again.
        sim.machineReading(MachineReading(memoryPressure: .critical))
        sim.run(for: .seconds(1))
        #expect(Self.warnings(sim, Self.front) == 2)
        #expect(Self.endedForMemory(sim).isEmpty, "the apps have their grace")
        sim.machineReading(MachineReading(memoryPressure: .normal))
        sim.run(for: .seconds(10))
        #expect(Self.endedForMemory(sim).isEmpty)
        #expect(sim.core.memory.episode == nil && sim.core.nextDeadline.map { $0 > sim.now + .seconds(60) } ?? true)
        #expect(sim.log.contains { $0.kind == .device && $0.message.hasPrefix("memory pressure relieved after ") && $0.message.hasSuffix("; no app ended") })
    }

    @Test("MEM-1, LC-5: critical pressure that stays ends the least recently used suspended app first, without a callback, once per reading taken after the last ending; relief stops it")
    func endsInOrderOncePerReading() throws {
        var sim = try Self.device()
        sim.machineReading(MachineReading(memoryPressure: .critical))
        sim.run(for: .seconds(2))
        #expect(Self.endedForMemory(sim) == [appA], "A was used before B")
        let record = try #require(sim.status(of: appA)?.lastTermination)
        #expect(record.reason == .memoryPressure(pressure: .critical, band: .suspended, megabytes: 40))
        #expect(record.summary == "ended for memory (pressure critical): suspended, 40 MB (killed by signal 9)")
        #expect(!sim.trace.contains { $0.app == appA && $0.event == .callback("willTerminate") }, "no callback (LC-5)")
        #expect(sim.core.apps[appA]?.durable.crashLoop.consecutiveCrashes == 0, "not the app's failure")

        // No reading since: nothing more, however long (and no timer spinning meanwhile).
        sim.run(for: .seconds(10))
        #expect(Self.endedForMemory(sim) == [appA])
        #expect(sim.core.nextDeadline.map { $0 > sim.now } ?? true)
        // A reading still critical ends the next in the order.
        sim.memoryPressureRead(.critical)
        sim.run(for: .milliseconds(10))
        #expect(Self.endedForMemory(sim) == [appA, appB])
        // Relieved: nobody else.
        sim.memoryPressureRead(.normal)
        sim.run(for: .seconds(30))
        #expect(Self.endedForMemory(sim) == [appA, appB])
        #expect(sim.status(of: Self.music)?.pid != nil && sim.status(of: Self.front)?.pid != nil)
        #expect(sim.log.contains { $0.message.hasSuffix("; ended '\(appA)', '\(appB)'") })
    }

    @Test("MEM-1: set by hand, the level is its own reading: apps go one per interval — suspended, then the background one the user hears, then the app in front — until it is set back")
    func byHandEndsEveryBandInTurn() throws {
        var sim = try Self.device()
        try sim.setConditions(ConditionOverrides(memoryPressure: .critical))
        sim.run(for: .milliseconds(2_500))
        #expect(Self.endedForMemory(sim) == [appA])
        sim.run(for: .seconds(1))
        #expect(Self.endedForMemory(sim) == [appA, appB])
        sim.run(for: .seconds(1))
        #expect(Self.endedForMemory(sim) == [appA, appB, Self.music])
        let music = try #require(sim.status(of: Self.music)?.lastTermination)
        #expect(music.summary == "ended for memory (pressure critical): background-user, 20 MB (killed by signal 9)")
        sim.run(for: .seconds(1))
        #expect(Self.endedForMemory(sim) == [appA, appB, Self.music, Self.front], "the app in front last")
        #expect(sim.core.device.foregroundApp == nil)
        sim.run(for: .seconds(30))
        #expect(sim.core.nextDeadline.map { $0 > sim.now + .seconds(60) } ?? true, "nobody left: no timer")
        // A process that starts meanwhile is ended in its turn; set back to auto, nothing more.
        try sim.openAndSettle(appA)
        sim.run(for: .seconds(1))
        #expect(Self.endedForMemory(sim).count == 5)
        try sim.setConditions(ConditionOverrides())
        try sim.openAndSettle(appB)
        sim.run(for: .seconds(30))
        #expect(Self.endedForMemory(sim).count == 5 && sim.status(of: appB)?.pid != nil)
    }

    @Test("MEM-1, SET-2: an app kept in memory goes after every other app out of front, even the one playing music")
    func keptInMemoryLast() throws {
        var sim = try Self.device()
        var settings = try #require(sim.core.apps[appA]?.app.settings)
        settings.keptInMemory = true
        try sim.setAppSettings(settings, for: appA)
        try sim.setConditions(ConditionOverrides(memoryPressure: .critical))
        sim.run(for: .milliseconds(4_500))
        #expect(Self.endedForMemory(sim) == [appB, Self.music, appA])
    }

    @Test("MEM-1: a warning that stays past the tolerance ends apps too; within it, none")
    func warningThatStays() throws {
        var configuration = CoreConfiguration()
        configuration.memory.warningTolerance = 20
        var sim = try Self.device(configuration: configuration)
        sim.machineReading(MachineReading(memoryPressure: .warning))
        sim.run(for: .seconds(19))
        #expect(Self.endedForMemory(sim).isEmpty)
        sim.run(for: .seconds(2))
        #expect(Self.endedForMemory(sim) == [appA])
        let record = try #require(sim.status(of: appA)?.lastTermination)
        #expect(record.reason == .memoryPressure(pressure: .warning, band: .suspended, megabytes: 40))
    }

    @Test("MEM-1: offstage memory-warning warns one running app or every one, and refuses an app not installed, not running or suspended, changing nothing")
    func warningByHand() throws {
        var sim = try Self.device()
        #expect(try sim.memoryWarning(Self.front) == 1)
        sim.run(for: .milliseconds(100))
        #expect(Self.warnings(sim, Self.front) == 1 && Self.warnings(sim, Self.music) == 0)
        #expect(try sim.memoryWarning(nil) == 2)
        sim.run(for: .milliseconds(100))
        #expect(Self.warnings(sim, Self.front) == 2 && Self.warnings(sim, Self.music) == 1)
        let before = sim.trace.count
        #expect(throws: CoreError.self) { try sim.memoryWarning("com.example.absent") }
        #expect(throws: CoreError.self) { try sim.memoryWarning(appA) }
        do {
            try sim.memoryWarning(appA)
        } catch {
            #expect(error.code == .appNotRunning && error.message.contains("is suspended") && !error.fix.isEmpty)
        }
        sim.run(for: .milliseconds(100))
        #expect(sim.trace.count == before, "nothing was sent")
        #expect(sim.core.memory.episode == nil, "a warning by hand is not memory pressure")
    }

    @Test("MEM-1: the response's settings refuse a grace out of range and a level that is not warning or critical")
    func settingsRefused() throws {
        let decoder = JSONDecoder()
        #expect(throws: DecodingError.self) {
            try decoder.decode(CoreConfiguration.self, from: Data(#"{"memory": {"warningGrace": -1}}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try decoder.decode(CoreConfiguration.self, from: Data(#"{"memory": {"endAppsAt": "normal"}}"#.utf8))
        }
        let given = try decoder.decode(CoreConfiguration.self, from: Data(#"{"memory": {"endAppsAt": "warning", "endingInterval": 0.5}}"#.utf8))
        #expect(given.memory.endAppsAt == .warning && given.memory.endingInterval == 0.5 && given.memory.warningGrace == 2)
    }
}
