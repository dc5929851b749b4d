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
}
