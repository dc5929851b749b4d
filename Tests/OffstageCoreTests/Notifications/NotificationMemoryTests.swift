#if os(Linux)
import COffstageSystem
import Foundation
import OffstageCore
import Testing

/// What 64,000 pending notifications across 1,000 apps cost the core (SPEC §11: the daemon stays within 64 MB with
/// them), and what a burst of all of them firing at once after downtime costs.
///
/// The figures come from the allocator (glibc's `mallinfo2`: bytes in use, in the arenas and in mapped chunks) before
/// and after, so they count everything the core keeps: its tables, the requests, their text, the due queue. Those are
/// the whole process's, which other tests running beside would move by megabytes: each measurement runs in a process
/// of its own (this test binary again, selecting only its probe), and reports to the test that started it.
@Suite("Notification memory at scale (SPEC §11)")
struct NotificationMemoryTests {
    static let apps = 1_000
    static let perApp = 64
    static let now = Instant(secondsSinceEpoch: 1_767_268_800)

    @Test(
        "64,000 pending notifications across 1,000 apps cost the core at most 300 bytes each", .timeLimit(.minutes(2)))
    func pendingFootprint() throws {
        let report = try Self.run(probe: "pendingFootprintProbe")
        let count = try #require(report["pending"])
        let bytes = try #require(report["bytes"])
        let restore = try #require(report["restoreMilliseconds"])
        print(
            "notification memory: \(Int(count)) pending take \(Int(bytes)) bytes, \(Int(bytes / count)) each; "
                + "restored in \(Int(restore)) ms")
        #expect(count == Double(Self.apps * Self.perApp))
        #expect(bytes / count <= 300, "\(Int(bytes / count)) bytes per pending notification")
    }

    @Test(
        "64,000 overdue notifications fire at once within 10 s, with what the burst holds and leaves bounded",
        .timeLimit(.minutes(2)))
    func overdueBurst() throws {
        let report = try Self.run(probe: "overdueBurstProbe")
        let fired = try #require(report["fired"])
        let milliseconds = try #require(report["milliseconds"])
        let held = try #require(report["heldBytes"])
        let left = try #require(report["leftBytes"])
        let peak = try #require(report["peakResidentBytes"])
        let megabytes = { (bytes: Double) in Int(bytes / 1_048_576) }
        print(
            "notification burst: \(Int(fired)) fired in \(Int(milliseconds)) ms; \(megabytes(held)) MB more with the "
                + "actions held, \(megabytes(left)) MB once they are done; resident peak \(megabytes(peak)) MB above "
                + "the start")
        #expect(fired == Double(Self.apps * Self.perApp))
        #expect(milliseconds < 10_000, "the burst took \(Int(milliseconds)) ms")
        #expect(held <= 96 * 1_048_576, "the burst's actions took \(megabytes(held)) MB")
        #expect(left <= 16 * 1_048_576, "the burst left \(megabytes(left)) MB behind")
        #expect(peak <= 160 * 1_048_576, "the resident size peaked \(megabytes(peak)) MB above where it was")
    }

    // MARK: The probes, each in a process of its own

    static let probeVariable = "OFFSTAGE_NOTIFICATION_MEMORY_PROBE"

    @Test(
        "(helper of pendingFootprint; runs only in the process that test starts)",
        .enabled(if: ProcessInfo.processInfo.environment[probeVariable] != nil))
    func pendingFootprintProbe() throws {
        var core = Self.installed()
        let before = Self.heapInUse()
        let clock = ContinuousClock()
        var took = Duration.zero
        do {
            let rows = Self.rows(overdue: false)
            let started = clock.now
            core.restoreNotifications(pending: rows, delivered: [], badges: [:], categories: [:])
            took = clock.now - started
        }
        let after = Self.heapInUse()
        try Self.write([
            "pending": Double(core.notifications.pendingCount), "bytes": Double(after - before),
            "restoreMilliseconds": Self.milliseconds(took),
        ])
        withExtendedLifetime(core) {}
    }

    @Test(
        "(helper of overdueBurst; runs only in the process that test starts)",
        .enabled(if: ProcessInfo.processInfo.environment[probeVariable] != nil))
    func overdueBurstProbe() throws {
        var core = Self.installed()
        core.restoreNotifications(pending: Self.rows(overdue: true), delivered: [], badges: [:], categories: [:])
        let before = Self.heapInUse()
        let resident = try Self.resetPeakResident()
        let clock = ContinuousClock()
        let started = clock.now
        var actions = core.recover(at: Self.now)
        let took = clock.now - started
        let holding = Self.heapInUse()
        let peak = try Self.peakResident()
        let fired = actions.count { if case .notification(.fire) = $0 { true } else { false } }
        actions = []
        let after = Self.heapInUse()
        #expect(core.notifications.nextDue.map { $0 > Self.now } ?? true, "nothing due is left")
        try Self.write([
            "fired": Double(fired), "milliseconds": Self.milliseconds(took), "heldBytes": Double(holding - before),
            "leftBytes": Double(after - before), "peakResidentBytes": Double(peak - resident),
        ])
        withExtendedLifetime(core) {}
    }

    // MARK: Helpers

    /// A core with `apps` apps installed, no notifications.
    static func installed() -> OffstageCore {
        var device = DeviceState()
        device.settings.timeZone = "Europe/Berlin"
        var core = OffstageCore(device: device, numberSeed: 1)
        for index in 0..<apps {
            let id = AppID("com.example.app\(index)")
            let app = InstalledApp(manifest: manifest(id), bundlePath: "/apps/\(id)", installedAt: now)
            core.restore(app, durable: .init())
        }
        return core
    }

    /// `perApp` pending requests for each app, as an app would schedule them: a title of 10 to 20 characters, a body
    /// of 30 to 60, a small user info, and a mix of triggers (a timer, a daily alarm, a date; some repeat, some name a
    /// zone). With `overdue` every one was due before `now`.
    static func rows(overdue: Bool) -> [(AppID, PendingNotification)] {
        var rows: [(AppID, PendingNotification)] = []
        rows.reserveCapacity(apps * perApp)
        let words = ["Meeting", "Reminder", "Take a break", "Water the plants", "Standup", "Call back", "Check in"]
        let sentence = String(repeating: "Don't forget what you planned for today. ", count: 2)
        for app in 0..<apps {
            let id = AppID("com.example.app\(app)")
            for index in 0..<perApp {
                let n = app * perApp + index
                let content = NotificationContent(
                    title: String((words[n % words.count] + " #\(n)").prefix(20)),
                    body: String(sentence.prefix(30 + n % 31)),
                    badge: n % 5 == 0 ? index : nil, userInfo: "{\"id\":\(10_000 + n)}",
                    categoryIdentifier: n % 7 == 0 ? "reply" : "")
                let trigger: NotificationTrigger
                let addedAt: Instant
                let due: Instant
                switch n % 3 {
                case 0:
                    let seconds = Double(600 + n % 3_000)
                    trigger = .timeInterval(seconds: seconds, repeats: n % 6 == 0)
                    addedAt = overdue ? now - .seconds(double: seconds + 5) : now
                    due = addedAt + .seconds(double: seconds)
                case 1:
                    let zone = n % 4 == 1 ? "America/New_York" : nil
                    let match = DateMatch(hour: n % 24, minute: (n / 24) % 60, timeZone: zone)
                    trigger = .calendar(match, repeats: true)
                    addedAt = now - .seconds(86_400 * 2)
                    due = overdue ? now - .seconds(60 + n % 3_600) : now + .seconds(60 + n % 86_000)
                default:
                    let at = overdue ? now - .seconds(30 + n % 7_200) : now + .seconds(3_600 + n % 864_000)
                    trigger = .date(at)
                    addedAt = now - .seconds(86_400)
                    due = at
                }
                let request = NotificationRequest(identifier: "reminder-\(index)", content: content, trigger: trigger)
                rows.append((id, PendingNotification(request: request, addedAt: addedAt, due: due)))
            }
        }
        return rows
    }

    /// Bytes the allocator has handed out and not taken back.
    static func heapInUse() -> Int { Int(offstage_heap_in_use()) }

    /// The resident size now, after setting the peak the kernel keeps (VmHWM) to it.
    static func resetPeakResident() throws -> Int {
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        return try status("VmRSS")
    }

    /// The highest resident size since ``resetPeakResident()``.
    static func peakResident() throws -> Int { try status("VmHWM") }

    /// A size from /proc/self/status, in bytes.
    static func status(_ field: String) throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        let kilobytes = try #require(line.split(separator: " ").dropFirst().first.flatMap { Int($0) })
        return kilobytes * 1_024
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }

    /// Hands the probe's figures to the test that started it.
    static func write(_ figures: [String: Double]) throws {
        let path = try #require(ProcessInfo.processInfo.environment[probeVariable])
        let text = figures.keys.sorted().map { "\($0) \(figures[$0]!)\n" }.joined()
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Runs the probe test named `probe` in a process of its own; its figures.
    static func run(probe: String) throws -> [String: Double] {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("offstage-memory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("report.txt").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", probe]
        var environment = ProcessInfo.processInfo.environment
        environment[probeVariable] = report
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "the probe \(probe) failed")
        let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        var figures: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { figures[String(parts[0])] = value }
        }
        return figures
    }
}
#endif
