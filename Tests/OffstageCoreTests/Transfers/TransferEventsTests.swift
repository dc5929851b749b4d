import OffstageCore
import OffstageSimulator
import Testing

/// Transfers run in the daemon while the app is away, and the app hears of every finished task once (SPEC TR-1..3).
@Suite("Background transfers: events and relaunch (SPEC TR-1, TR-2, TR-3)")
struct TransferEventsTests {
    @Test("TR-1: a download runs while its app is in front; the finished file is handed over and the open session's delegate hears of it once")
    func downloadInForeground() throws {
        var (sim, ids) = try Simulation.withDownloads(sizes: ["https://files.example.com/big.bin": 5_000_000])
        let id = try #require(ids.first)
        #expect(sim.transfer(id)?.state == .running)
        sim.run(for: .seconds(1))
        #expect(sim.handedOverTransfers == [id])
        #expect(sim.transferEventsHeard[appA] == [id], "the delegate heard of it once")
        #expect(sim.transfer(id) == nil && sim.transferJournal[id] == nil, "acknowledged, it is forgotten in the core and the journal")
        #expect(sim.launches(of: appA) == [.user])
    }

    @Test("TR-2, TR-3: the app is suspended while its download runs; when the session finishes it is resumed, its handler called with the session, and suspended again after the completion handler")
    func suspendedAppIsResumed() throws {
        var (sim, ids) = try Simulation.withDownloads(sizes: ["https://files.example.com/big.bin": 50_000_000])
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended, "the transfer does not keep the app running")
        #expect(sim.transfer(ids[0])?.state == .running)
        sim.run(for: .seconds(4))
        #expect(sim.transferEventsHeard[appA] == ids)
        #expect(sim.callbacks(of: appA).filter { $0 == "transferEvents" }.count == 1)
        #expect(sim.trace(of: appA).contains { $0.event == .thawed })
        #expect(sim.launches(of: appA) == [.user], "resumed, not launched")
        sim.run(for: .seconds(3))
        #expect(sim.state(of: appA) == .suspended, "suspended again once the handler completed")
        #expect(sim.logLines(of: appA, .transfer).contains { $0.contains("handled after") })
    }

    @Test("TR-2: progress reaches the app only while it is in front; in the background checkpoints do not wake it, and it is suspended")
    func noProgressInBackground() throws {
        var (sim, ids) = try Simulation.withDownloads(sizes: ["https://files.example.com/big.bin": 1_000_000_000_000])
        let id = ids[0]
        for step in 1...3 {
            let attempt = try #require(sim.transfer(id)).attempt
            sim.input { core, now in core.transferProgress(id, attempt: attempt, bytesDone: Int64(step) << 20, bytesExpected: nil, validator: nil, at: now) }
            sim.run(for: .milliseconds(1_100))
        }
        #expect(sim.callbacks(of: appA).filter { $0 == "transferEvents" }.count >= 2, "in front, progress every second")
        sim.home()
        let left = sim.now
        for step in 4...10 {
            let attempt = try #require(sim.transfer(id)).attempt
            sim.input { core, now in core.transferProgress(id, attempt: attempt, bytesDone: Int64(step) << 20, bytesExpected: nil, validator: nil, at: now) }
            sim.run(for: .milliseconds(700))
        }
        #expect(sim.state(of: appA) == .suspended, "checkpoints do not keep the app awake")
        #expect(!sim.events(of: appA, since: left).contains(.callback("transferEvents")))
    }

    @Test("TR-3: when the session finishes and the app is not running it is launched into the background with reason transfer-events; every event arrives once")
    func notRunningAppIsLaunched() throws {
        var (sim, ids) = try Simulation.withDownloads(
            ["https://files.example.com/1", "https://files.example.com/2"],
            sizes: ["https://files.example.com/1": 20_000_000, "https://files.example.com/2": 40_000_000])
        sim.home()
        sim.run(for: .seconds(2))
        let pid = try #require(sim.status(of: appA)?.pid)
        sim.input { core, now in core.processExited(appA, pid: pid, status: .signaled(9), at: now) }
        #expect(sim.state(of: appA) == .notRunning)
        sim.run(for: .seconds(10))
        #expect(sim.launches(of: appA) == [.user, .transferEvents])
        #expect(sim.transferEventsHeard[appA]?.sorted() == ids.sorted())
        #expect(sim.core.transfers.tasks.isEmpty && sim.transferJournal.isEmpty)
        sim.run(for: .seconds(60))
        #expect(sim.launches(of: appA) == [.user, .transferEvents], "no second launch for the same events")
    }

    @Test("TR-3: the app is not launched while one task of the session is unfinished")
    func waitsForTheWholeSession() throws {
        var (sim, _) = try Simulation.withDownloads(
            ["https://files.example.com/1", "https://files.example.com/2"],
            sizes: ["https://files.example.com/1": 1_000, "https://files.example.com/2": 1_000_000_000])
        sim.home()
        sim.run(for: .seconds(2))
        let pid = try #require(sim.status(of: appA)?.pid)
        sim.input { core, now in core.processExited(appA, pid: pid, status: .exited(0), at: now) }
        sim.run(for: .seconds(30))
        #expect(sim.launches(of: appA) == [.user])
        sim.run(for: .seconds(100))
        #expect(sim.launches(of: appA) == [.user, .transferEvents])
    }

    @Test("TR-3: launches for transfers wait twice as long each time (30 s, 60 s …) until the user opens the app")
    func relaunchesAreRateLimited() throws {
        var (sim, _) = try Simulation.withDownloads([])
        sim.home()
        sim.run(for: .seconds(2))
        var launchTimes: [Instant] = []
        for round in 0..<4 {
            if let pid = sim.status(of: appA)?.pid {
                sim.input { core, now in core.processExited(appA, pid: pid, status: .exited(0), at: now) }
            }
            let start = sim.now
            // A task of a session whose app has no process: the core takes it from the shell's journal as a restart would.
            var task = TransferTask(id: 10_000 + UInt64(round), app: appA, session: downloads, request: download(), at: start)
            task.state = .completed
            sim.input { core, _ in core.restoreTransfers(tasks: [task], sessions: Array(core.transfers.sessions.values), relaunches: core.transfers.relaunches) }
            sim.input { core, now in core.advance(to: now) }
            sim.run(for: .seconds(200))
            launchTimes.append(try #require(sim.trace(of: appA).last { if case .launched(.transferEvents) = $0.event { $0.at >= start } else { false } }?.at))
            sim.run(for: .seconds(5))
        }
        // The first launch is at once; each later one waits 30 s, 60 s, 120 s after the previous launch.
        let gaps = zip(launchTimes.dropFirst(), launchTimes).map { ($0 - $1).inSeconds }
        #expect(gaps.count == 3)
        #expect(gaps[0] >= 30 && gaps[1] >= 60 && gaps[2] >= 120, "gaps \(gaps)")
        #expect(sim.core.transfers.relaunches[appA]?.count == 4)
        try sim.openAndSettle(appA)
        #expect(sim.core.transfers.relaunches[appA] == nil || sim.core.transfers.relaunches[appA]?.count == 0, "opening the app resets the delay")
    }

    @Test("TR-3: a session that does not send launch events never launches the app; its events wait until the app opens the session")
    func noLaunchEvents() throws {
        var (sim, ids) = try Simulation.withDownloads(
            session: TransferSessionConfiguration(sendsLaunchEvents: false), sizes: ["https://files.example.com/big.bin": 50_000_000])
        sim.home()
        sim.run(for: .seconds(2))
        let pid = try #require(sim.status(of: appA)?.pid)
        sim.input { core, now in core.processExited(appA, pid: pid, status: .exited(0), at: now) }
        sim.run(for: .seconds(60))
        #expect(sim.launches(of: appA) == [.user])
        #expect(sim.transfer(ids[0])?.state == .completed)
        try sim.openAndSettle(appA)
        sim.openTransferSession(appA, identifier: downloads, configuration: TransferSessionConfiguration(sendsLaunchEvents: false))
        #expect(sim.transferEventsHeard[appA] == ids, "opening the session gives the delegate the finished task")
    }

    @Test("TR-2: force-quitting the app cancels its unfinished transfers and it is not launched for them; it hears why when it next opens the session")
    func forceQuitCancels() throws {
        var (sim, ids) = try Simulation.withDownloads(sizes: ["https://files.example.com/big.bin": 1_000_000_000])
        sim.home()
        sim.run(for: .seconds(2))
        try sim.forceQuit(appA)
        sim.run(for: .seconds(60))
        let task = try #require(sim.transfer(ids[0]))
        #expect(task.state == .failed && task.failure?.code == .forceQuit)
        #expect(sim.transferJournal[ids[0]]?.state == .failed, "journaled")
        #expect(sim.launches(of: appA) == [.user])
        #expect(sim.transferEventsHeard[appA, default: []].isEmpty)
        try sim.openAndSettle(appA)
        sim.openTransferSession(appA, identifier: downloads)
        sim.run(for: .milliseconds(100))
        #expect(sim.transferEventsHeard[appA] == ids, "the delegate hears of the cancelled task when the app opens the session")
    }

    @Test("TR-1: uninstalling the app forgets its sessions and tasks, running ones stopped")
    func uninstallForgets() throws {
        var (sim, ids) = try Simulation.withDownloads(sizes: ["https://files.example.com/big.bin": 1_000_000_000])
        sim.input { core, now in try! core.uninstall(appA, at: now) }
        sim.run(for: .seconds(20))
        #expect(sim.core.transfers.tasks.isEmpty && sim.core.transfers.sessions.isEmpty)
        #expect(sim.transferJournal[ids[0]] == nil)
    }
}
