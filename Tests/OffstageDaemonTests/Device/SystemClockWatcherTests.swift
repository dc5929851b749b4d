import Foundation
import OffstageCore
import Synchronization
import Testing

@testable import OffstageDaemon

@Suite("The clock and time-zone watcher (SPEC LC-4 system events)", .serialized)
struct SystemClockWatcherTests {
    /// Collects what the watcher reports.
    final class Events: Sendable {
        let seen = Mutex<[SystemEvent]>([])
        func wait(for event: SystemEvent, seconds: Double = 5) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if seen.withLock({ $0.contains(event) }) { return true }
                usleep(10_000)
            }
            return seen.withLock { $0.contains(event) }
        }
    }

    @Test("LC-4: a new /etc/localtime (in a folder of the test's own) is a time-zone change and a significant time change")
    func timeZoneChange() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-tz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let events = Events()
        let watcher = try SystemClockWatcher(zoneDirectory: folder.path) { event in events.seen.withLock { $0.append(event) } }
        defer { watcher.stop() }
        try Data("Europe/Berlin\n".utf8).write(to: folder.appendingPathComponent("unrelated"))
        usleep(100_000)
        #expect(events.seen.withLock { $0.isEmpty }, "another file in the folder is no time-zone change")
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("localtime").path, withDestinationPath: "/usr/share/zoneinfo/Europe/Berlin")
        #expect(events.wait(for: .timeZoneChange))
        #expect(events.wait(for: .significantTimeChange))
    }

    @Test("LC-4: setting the clock (to the time it shows) is a significant time change")
    func clockSet() throws {
        let events = Events()
        let watcher = try SystemClockWatcher(zoneDirectory: FileManager.default.temporaryDirectory.path) { event in
            events.seen.withLock { $0.append(event) }
        }
        defer { watcher.stop() }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        guard clock_settime(CLOCK_REALTIME, &now) == 0 else {
            // Setting the clock needs CAP_SYS_TIME; said, not passed silently.
            try Test.cancel("setting the clock is not permitted here (errno \(errno)); the time-zone path is tested instead")
        }
        #expect(events.wait(for: .significantTimeChange))
    }
}
