import Foundation
import OffstageCore
@testable import OffstageDaemon
import Testing

/// The history of scheduled work in the store (SPEC SCH-8, SCH-10): written as the core hands it out, read back
/// exactly, bounded by age and by rows per app, and still there after the store is opened again.
@Suite("OffstageStore: history of scheduled work")
struct HistoryStoreTests {
    let app: AppID = "com.example.refresh"
    let t0 = Instant(nanosecondsSinceEpoch: 1_800_000_000_123_456_789)

    func withFolder(_ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-history-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder + "/offstage.sqlite")
    }

    func wait(_ start: Double, _ end: Double?, _ reasons: [WaitReason], app: AppID? = nil, identifier: String = "com.example.refresh") -> WaitRecord {
        WaitRecord(
            app: app ?? self.app, identifier: identifier, kind: .appRefresh, startedAt: t0 + .seconds(double: start),
            endedAt: end.map { t0 + .seconds(double: $0) }, reasons: reasons)
    }

    func run(_ number: UInt64, _ start: Double, _ end: Double?, app: AppID? = nil) -> RunRecord {
        var run = RunRecord(
            app: app ?? self.app, identifier: "com.example.refresh", kind: .appRefresh, run: number,
            startedAt: t0 + .seconds(double: start), forced: number % 2 == 0, start: .resumed)
        if let end {
            run.endedAt = t0 + .seconds(double: end)
            run.outcome = .expired
            run.result = .failed
            run.expiry = .runtime
            run.detail = "runtime of 30 s is over"
        }
        return run
    }

    @Test("SCH-8: records come back exactly (nanoseconds, reasons, outcome), an open record is closed in place, and one that lasted no time is gone")
    func roundTrip() throws {
        try withFolder { path in
            let store = try OffstageStore(path: path)
            try store.appendHistory([.wait(wait(0, nil, [.noNetwork, .externalPower])), .run(run(1, 0, nil))], at: t0)
            let open = try store.history(of: app, from: t0, to: t0 + .seconds(10))
            #expect(open.waits == [wait(0, nil, [.noNetwork, .externalPower])] && open.runs == [run(1, 0, nil)])
            try store.appendHistory(
                [.wait(wait(0, 7200.5, [.noNetwork, .externalPower])), .run(run(1, 0, 35)), .wait(wait(7200.5, 7200.5, [.plannedTime]))],
                at: t0 + .seconds(7201))
            let closed = try store.history(of: app, from: t0, to: t0 + .seconds(8000))
            #expect(closed.waits == [wait(0, 7200.5, [.noNetwork, .externalPower])], "closed in place; the empty one is not kept")
            #expect(closed.runs == [run(1, 0, 35)])
            #expect(try store.history(of: app, from: t0 + .seconds(7300), to: t0 + .seconds(8000)).waits.isEmpty)
            #expect(try store.history(of: "com.example.other", from: t0, to: t0 + .seconds(8000)).waits.isEmpty)
        }
    }

    @Test("SCH-8, SCH-10: history survives the store being opened again; what the previous daemon left open is closed at the last moment it was known alive, marked interrupted")
    func survivesReopening() throws {
        try withFolder { path in
            do {
                let store = try OffstageStore(path: path)
                try store.appendHistory([.wait(wait(0, 60, [.inForeground])), .wait(wait(60, nil, [.noNetwork])), .run(run(3, 60, nil))], at: t0)
                try store.appendLog([LogEntry(at: t0 + .seconds(90), app: app, kind: .state, message: "last thing it did")])
            }
            let reopened = try OffstageStore(path: path)
            #expect(try reopened.closeInterruptedHistory() == 2)
            let stored = try reopened.history(of: app, from: t0, to: t0 + .seconds(3600))
            // The event log keeps seconds as a double: the last moment alive is exact to a microsecond.
            func nearly(_ instant: Instant?, _ seconds: Double) -> Bool {
                instant.map { abs(($0 - (t0 + .seconds(double: seconds))).inSeconds) < 1e-6 } ?? false
            }
            #expect(stored.waits.count == 2 && stored.waits.first == wait(0, 60, [.inForeground]))
            let interrupted = try #require(stored.waits.last)
            #expect(interrupted.interrupted && interrupted.reasons == [.noNetwork] && nearly(interrupted.endedAt, 90))
            let run = try #require(stored.runs.first)
            #expect(nearly(run.endedAt, 90) && run.outcome == .daemonStopped)
            #expect(try reopened.closeInterruptedHistory() == 0, "nothing is left open")
            let report = TaskHistoryReport.reports(waits: stored.waits, runs: stored.runs, from: t0, to: t0 + .seconds(3600))
            #expect(report.first?.interrupted == true && abs((report.first?.waited ?? 0) - 90) < 1e-6)
        }
    }

    @Test("SCH-8: an app's rows are capped — a busy app keeps at most the cap in each table, its newest; other apps keep theirs")
    func prunedByCount() throws {
        try withFolder { path in
            let store = try OffstageStore(path: path, historyBounds: .init(maximumAge: 30 * 86_400, rowsPerApp: 100))
            let quiet: AppID = "com.example.quiet"
            try store.appendHistory([.wait(wait(0, 1, [.noNetwork], app: quiet)), .run(run(1, 1, 2, app: quiet))], at: t0)
            var maximum = 0
            for batch in 0..<25 {
                var records: [HistoryRecord] = []
                for index in 0..<20 {
                    let start = Double(batch * 20 + index) * 10
                    records += [.wait(wait(start, start + 5, [.plannedTime])), .run(run(UInt64(1_000 + batch * 20 + index), start + 5, start + 10))]
                }
                try store.appendHistory(records, at: t0 + .seconds(5_000))
                let stored = try store.history(of: app, from: t0, to: t0 + .seconds(10_000))
                maximum = max(maximum, stored.waits.count, stored.runs.count)
            }
            #expect(maximum <= 100, "never more than the cap per table: \(maximum)")
            let stored = try store.history(of: app, from: t0, to: t0 + .seconds(10_000))
            #expect(stored.waits.count >= 90 && stored.runs.count >= 90)
            #expect(stored.waits.last?.startedAt == t0 + .seconds(4_990), "the newest are kept")
            #expect(try store.history(of: quiet, from: t0, to: t0 + .seconds(10)).waits.count == 1)
        }
    }

    @Test("SCH-8: closed records older than the maximum age go; open ones stay however old")
    func prunedByAge() throws {
        try withFolder { path in
            let store = try OffstageStore(path: path, historyBounds: .init(maximumAge: 86_400, rowsPerApp: 1_000))
            try store.appendHistory(
                [.wait(wait(0, 100, [.noNetwork])), .run(run(1, 100, 130)), .wait(wait(130, nil, [.earliestBegin], identifier: "com.example.other"))],
                at: t0 + .seconds(200))
            let later = t0 + .seconds(2 * 86_400)
            try store.appendHistory([.wait(wait(2 * 86_400 - 10, 2 * 86_400, [.inForeground]))], at: later)
            let stored = try store.history(of: app, from: t0, to: later)
            #expect(stored.runs.isEmpty)
            #expect(stored.waits.map(\.identifier) == ["com.example.other", "com.example.refresh"])
            #expect(stored.waits.first?.endedAt == nil)
        }
    }

    @Test("SCH-8: uninstalling an app removes its history")
    func uninstallRemoves() throws {
        try withFolder { path in
            let store = try OffstageStore(path: path)
            try store.appendHistory([.wait(wait(0, 10, [.noNetwork])), .run(run(1, 10, 20))], at: t0)
            try store.deleteApp(app)
            let stored = try store.history(of: app, from: t0, to: t0 + .seconds(100))
            #expect(stored.waits.isEmpty && stored.runs.isEmpty)
            try store.appendHistory([.wait(wait(30, 40, [.noNetwork]))], at: t0 + .seconds(40))
            #expect(try store.history(of: app, from: t0, to: t0 + .seconds(100)).waits.count == 1)
        }
    }
}
