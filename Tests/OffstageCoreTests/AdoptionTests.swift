import Foundation
import OffstageCore
import Testing

/// Apps found alive after a daemon restart are adopted together, before anything is decided (SPEC LC-8).
@Suite("Adopting the apps found alive after a restart (SPEC LC-8, TR-3)")
struct AdoptionTests {
    static let alarm: AppID = "com.example.alarm"
    static let downloader: AppID = "com.example.downloader"
    static let now = Instant(secondsSinceEpoch: 100)

    /// A core after a restart: two apps installed, and the downloader's session finished while the daemon was down,
    /// its events not yet signalled — the daemon wakes an app for that (TR-3).
    static func restartedWithEventsDue() -> OffstageCore {
        var core = OffstageCore(numberSeed: 1)
        for id in [alarm, downloader] {
            core.restore(InstalledApp(manifest: Manifest(id: id, executable: "app"), bundlePath: "/x", installedAt: now), durable: .init())
        }
        var task = TransferTask(
            id: 9, app: downloader, session: "downloads",
            request: TransferRequest(kind: .download, url: "http://127.0.0.1/big.bin", filename: "big.bin"), at: now - .seconds(60))
        task.state = .completed
        task.finishedAt = now - .seconds(5)
        let session = TransferSession(
            key: TransferSessionKey(app: downloader, identifier: "downloads"), configuration: TransferSessionConfiguration())
        _ = core.restoreTransfers(tasks: [task], sessions: [session], relaunches: [:])
        return core
    }

    static func launches(_ actions: [CoreAction]) -> [AppID] {
        actions.compactMap { if case .launch(let id, _) = $0 { id } else { nil } }
    }

    @Test("LC-8, TR-3: both survivors adopted at once — the downloader, whose session's events are due, is not launched a second time while its process is alive but not adopted yet; its events go to that process")
    func survivorsAdoptedTogether() throws {
        var core = Self.restartedWithEventsDue()
        // The alarm sorts first: adopting it alone would decide, and launch the downloader for its events.
        let actions = core.adopt([(Self.alarm, 700), (Self.downloader, 777)], at: Self.now)
        #expect(Self.launches(actions).isEmpty, "\(actions)")
        #expect(actions.contains(.thaw(Self.alarm, pid: 700)) && actions.contains(.thaw(Self.downloader, pid: 777)))
        #expect(core.apps[Self.downloader]?.process?.pid == 777)
        let logged = actions.compactMap { if case .log(let entry) = $0, entry.app == Self.downloader { entry.message } else { nil } }
        #expect(
            logged.contains { $0.contains("handle-events-for-background-session called (running)") },
            "the events go to the process found alive: \(logged)")
    }

    @Test("LC-8: what one adoption at a time would do — the hazard the joint adoption removes: adopting the first survivor alone launches the second")
    func oneAtATimeLaunchesASecondInstance() throws {
        var core = Self.restartedWithEventsDue()
        #expect(Self.launches(core.adopt(Self.alarm, pid: 700, at: Self.now)) == [Self.downloader])
    }

    @Test("MEM-1, MEM-2, LC-8: a process the previous daemon had sent SIGKILL for a reason it wrote down, found gone at start, is recorded as ended for that reason (its last exit and the log), once, before anything is decided; a memory-limit kill counts for the crash loop, memory pressure does not")
    func vanishedProcessKeepsItsEnding() throws {
        var core = Self.restartedWithEventsDue()
        let pressure = TerminationReason.memoryPressure(pressure: .critical, band: .suspended, megabytes: 40)
        let actions = core.adopt([], vanished: [(Self.alarm, pressure)], at: Self.now)
        let record = try #require(core.apps[Self.alarm]?.durable.lastTermination)
        #expect(record.reason == pressure && record.status == .signaled(9))
        #expect(record.summary == "ended for memory (pressure critical): suspended, 40 MB (killed by signal 9)")
        #expect(actions.contains(.saveApp(Self.alarm)))
        let logged = actions.compactMap { if case .log(let entry) = $0 { entry } else { nil } }
        let exits = logged.filter { $0.app == Self.alarm }
        #expect(exits.map(\.message) == [record.summary + "; its exit came while the daemon was down"])
        #expect(exits.first?.kind == .exit)
        #expect(core.apps[Self.alarm]?.durable.crashLoop.consecutiveCrashes == 0, "memory pressure is not the app's failure")
        // Recorded before anything is decided: the downloader, launched for its session's events at that first
        // decision, was recorded first (it is not throttled by the alarm's record).
        #expect(Self.launches(actions) == [Self.downloader])
        var limited = Self.restartedWithEventsDue()
        _ = limited.adopt([(Self.alarm, 700)], vanished: [(Self.downloader, .memoryLimitExceeded(megabytes: 48))], at: Self.now)
        #expect(limited.apps[Self.downloader]?.durable.crashLoop.consecutiveCrashes == 1, "over its limit, it failed")
        #expect(limited.apps[Self.downloader]?.durable.lastTermination?.reason == .memoryLimitExceeded(megabytes: 48))
    }

    @Test("MEM-1, LC-8: a daemon that starts with memory pressure set to critical (kept across the restart) answers it once the survivors are adopted: they are warned, then ended in the ending order after the grace")
    func restartUnderPressureAnswersIt() throws {
        var device = DeviceState()
        device.overrides.memoryPressure = .critical
        var core = OffstageCore(device: device, numberSeed: 1)
        for id in [Self.alarm, Self.downloader] {
            core.restore(InstalledApp(manifest: Manifest(id: id, executable: "app"), bundlePath: "/x", installedAt: Self.now), durable: .init())
        }
        let actions = core.adopt([(Self.alarm, 700), (Self.downloader, 777)], at: Self.now)
        #expect(core.memory.episode?.level == .critical)
        let warned = actions.compactMap { if case .log(let entry) = $0 { entry.message } else { nil } }
        #expect(warned.contains("memory warning (memory pressure critical) for 2 running app(s)"), "\(warned)")
        let grace = CoreConfiguration().memory.warningGrace
        let later = core.advance(to: Self.now + .seconds(double: grace))
        #expect(later.contains { if case .kill = $0 { true } else { false } }, "one app is ended once the grace is over: \(later)")
    }
}
