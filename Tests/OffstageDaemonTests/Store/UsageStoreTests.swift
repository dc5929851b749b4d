import Foundation
import OffstageCore
@testable import OffstageDaemon
import Testing

/// What each app used, in the store (SPEC SET-3): figures add up across writes and restarts, memory keeps its peak,
/// days older than those kept go, and an uninstalled app's rows go with it.
@Suite("OffstageStore: usage per app and day")
struct UsageStoreTests {
    let a: AppID = "com.example.a"
    let b: AppID = "com.example.b"

    func withStore(_ body: (String, OffstageStore) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-usage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder + "/offstage.sqlite", try OffstageStore(path: folder + "/offstage.sqlite"))
    }

    @Test("SET-3: each write adds to the day's figures, memory keeps the last reading and the peak, and both survive reopening")
    func writesAddUp() throws {
        try withStore { path, store in
            let key = UsageKey(app: a, day: 100, foreground: false, metered: true)
            let day = UsageDay(app: a, day: 100)
            try store.addUsage([key: UsageFigures(received: 10, cpuMicroseconds: 7, seconds: 1.5, wakeUps: 1)], memory: [day: MemoryFigures(last: 50, peak: 80)], firstDayKept: 70)
            try store.addUsage([key: UsageFigures(received: 5, transferSent: 3, seconds: 0.5)], memory: [day: MemoryFigures(last: 60, peak: 60)], firstDayKept: 70)
            let reopened = try OffstageStore(path: path)
            let stored = try reopened.usage(of: nil, fromDay: 0)
            #expect(stored.figures == [key: UsageFigures(received: 15, transferSent: 3, cpuMicroseconds: 7, seconds: 2, wakeUps: 1)])
            #expect(stored.memory == [day: MemoryFigures(last: 60, peak: 80)])
        }
    }

    @Test("SET-3: a query reads one app or all from a day on; days before those kept are dropped at the next write; uninstalling deletes an app's rows")
    func boundsAndQueries() throws {
        try withStore { _, store in
            var figures: [UsageKey: UsageFigures] = [:]
            for day in Int64(1)...40 {
                figures[UsageKey(app: a, day: day, foreground: true, metered: false)] = UsageFigures(sent: day)
                figures[UsageKey(app: b, day: day, foreground: false, metered: false)] = UsageFigures(received: day)
            }
            try store.addUsage(figures, memory: [UsageDay(app: a, day: 40): MemoryFigures(last: 1, peak: 2)], firstDayKept: 10)
            let all = try store.usage(of: nil, fromDay: 0)
            #expect(all.figures.count == 62 && all.figures.keys.map(\.day).min() == 10, "days 1 to 9 are not kept")
            let recentA = try store.usage(of: a, fromDay: 35)
            #expect(recentA.figures.count == 6 && recentA.figures.keys.allSatisfy { $0.app == a && $0.day >= 35 })
            try store.addUsage([:], memory: [UsageDay(app: b, day: 41): MemoryFigures(last: 3, peak: 3)], firstDayKept: 30)
            #expect(try store.usage(of: nil, fromDay: 0).figures.keys.map(\.day).min() == 30)
            try store.deleteUsage(of: a)
            let left = try store.usage(of: nil, fromDay: 0)
            #expect(left.figures.keys.allSatisfy { $0.app == b } && left.memory.keys.allSatisfy { $0.app == b })
            #expect(!left.figures.isEmpty)
        }
    }

    @Test("SET-3: summed over the window, each app has one figure per kind (dated by its latest day) and one memory: the newest day's last reading and the peak of all")
    func summedOverTheWindow() throws {
        try withStore { _, store in
            var figures: [UsageKey: UsageFigures] = [:]
            var memory: [UsageDay: MemoryFigures] = [:]
            for day in Int64(9)...12 {
                figures[UsageKey(app: a, day: day, foreground: false, metered: true)] = UsageFigures(received: day, seconds: 0.5, wakeUps: 1)
                memory[UsageDay(app: a, day: day)] = MemoryFigures(last: 100 - day, peak: day == 11 ? 500 : 100)
            }
            figures[UsageKey(app: b, day: 11, foreground: true, metered: false)] = UsageFigures(sent: 7)
            try store.addUsage(figures, memory: memory, firstDayKept: 0)
            let sums = try store.usageSummed(fromDay: 10)
            #expect(sums.figures == [
                UsageKey(app: a, day: 12, foreground: false, metered: true): UsageFigures(received: 33, seconds: 1.5, wakeUps: 3),
                UsageKey(app: b, day: 11, foreground: true, metered: false): UsageFigures(sent: 7),
            ], "day 9 is before the window")
            #expect(sums.memory == [UsageDay(app: a, day: 12): MemoryFigures(last: 88, peak: 500)])
        }
    }
}
