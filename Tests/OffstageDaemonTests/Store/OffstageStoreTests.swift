import Foundation
import OffstageCore
@testable import OffstageDaemon
import Testing

/// Reading the apps back at start-up, which with many apps is decoded on several threads (SPEC SCH-10, §11 scale).
@Suite("OffstageStore: apps read back")
struct OffstageStoreTests {
    func withStore(_ body: (OffstageStore, String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-store-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(try OffstageStore(path: folder + "/offstage.sqlite"), folder)
    }

    /// App `index`, each different: settings, requests, termination.
    func app(_ index: Int) -> (InstalledApp, AppDurableState) {
        let id = AppID("com.example.app" + String(format: "%04d", index))
        let identifiers = (0..<(index % 11)).map { "com.example.task\($0)" }
        let manifest = Manifest(
            id: id, executable: "App", backgroundModes: index % 2 == 0 ? [.fetch, .processing] : [],
            permittedTaskIdentifiers: identifiers, linux: .init(arguments: ["--n", "\(index)"]))
        var settings = AppSettings()
        settings.backgroundRefresh = index % 3 != 0
        let installed = Instant(secondsSinceEpoch: 1_800_000_000 + Double(index))
        var durable = AppDurableState()
        durable.forceQuit = index % 5 == 0
        for (position, identifier) in identifiers.enumerated() {
            durable.schedule.requests[identifier] = TaskRequest(
                identifier: identifier, kind: position == 0 ? .appRefresh : .processing,
                earliestBegin: installed + .seconds(3_600 * (position + 1)), requiresExternalPower: position % 2 == 0,
                submittedAt: installed)
        }
        return (InstalledApp(manifest: manifest, bundlePath: "/bundles/\(id)", installedAt: installed, settings: settings), durable)
    }

    @Test("1,000 apps come back as saved, sorted by id, whether decoded on one thread or several")
    func manyApps() throws {
        try withStore { store, _ in
            let saved = (0..<1_000).reversed().map(app)
            try store.save(apps: saved, device: nil)
            let expected = saved.sorted { $0.0.id < $1.0.id }
            for threads in [1, 2, 4, 16] {
                let loaded = try store.loadApps(threads: threads)
                #expect(loaded.count == expected.count)
                #expect(loaded.map(\.0) == expected.map(\.0), "\(threads) threads")
                #expect(loaded.map(\.1) == expected.map(\.1), "\(threads) threads")
            }
        }
    }

    @Test("the parallel decoding keeps the order, and an error on any thread fails the whole load")
    func parallelMap() throws {
        struct Bad: Error {}
        let numbers = Array(0..<1_000)
        for threads in [1, 2, 3, 8] {
            #expect(try ParallelDecoding.map(numbers, threads: threads) { $0 * 2 } == numbers.map { $0 * 2 })
            // The last element is decoded by another thread than the caller's, the first by the caller's.
            #expect(throws: Bad.self) { try ParallelDecoding.map(numbers, threads: threads) { if $0 == 999 { throw Bad() }; return $0 } }
            #expect(throws: Bad.self) { try ParallelDecoding.map(numbers, threads: threads) { if $0 == 0 { throw Bad() }; return $0 } }
        }
        #expect(try ParallelDecoding.map([Int](), threads: 4) { $0 }.isEmpty)
    }

    @Test("MEM-1, LC-8: why the daemon sent a process SIGKILL is kept with its record before the signal, cleared on request, and dropped when the process is recorded again")
    func processEndingWrittenAhead() throws {
        try withStore { store, _ in
            let id = AppID("com.example.viewer")
            let started = Instant(secondsSinceEpoch: 1_800_000_000)
            try store.saveProcess(.init(app: id, pid: 4_242, startTime: 77, startedAt: started))
            #expect(try store.loadProcesses().first?.ending == nil)
            let reason = TerminationReason.memoryPressure(pressure: .critical, band: .suspended, megabytes: 35)
            try store.setProcessEnding(of: id, pid: 4_242, reason)
            #expect(try store.loadProcesses() == [.init(app: id, pid: 4_242, startTime: 77, startedAt: started, ending: reason)])
            // Another pid of the app is not that process: nothing is written.
            try store.setProcessEnding(of: id, pid: 1, .memoryLimitExceeded(megabytes: 1))
            #expect(try store.loadProcesses().first?.ending == reason)
            try store.setProcessEnding(of: id, pid: 4_242, nil)
            #expect(try store.loadProcesses().first?.ending == nil)
            try store.setProcessEnding(of: id, pid: 4_242, reason)
            try store.saveProcess(.init(app: id, pid: 5_000, startTime: 78, startedAt: started))
            #expect(try store.loadProcesses().map(\.ending) == [nil], "a new process of the app starts with no ending")
        }
    }

    @Test("LC-8, MEM-1: a process that ended is forgotten in the transaction that saves the app's record of its end, and only that pid")
    func endedProcessForgottenWithItsRecord() throws {
        try withStore { store, _ in
            var (installed, durable) = app(1)
            let started = Instant(secondsSinceEpoch: 1_800_000_000)
            try store.saveProcess(.init(app: installed.id, pid: 4_242, startTime: 77, startedAt: started))
            // Another pid of the app is not that process: its row stays.
            try store.save(apps: [], device: nil, endedProcesses: [(installed.id, 1)])
            #expect(try store.loadProcesses().map(\.pid) == [4_242])
            let reason = TerminationReason.memoryPressure(pressure: .critical, band: .suspended, megabytes: 35)
            durable.lastTermination = TerminationRecord(at: started + .seconds(5), reason: reason, status: .signaled(9))
            try store.save(apps: [(installed, durable)], device: nil, endedProcesses: [(installed.id, 4_242)])
            #expect(try store.loadProcesses().isEmpty)
            #expect(try store.loadApps().first?.1.lastTermination == durable.lastTermination)
        }
    }
}
