import Foundation
import Offstage
import OffstageTesting
import Testing

/// The test kit itself: an app's real delegate and handlers, through the SDK, against the real core on virtual time.
/// Each test is one a developer would write for their own app.
@Suite("OffstageTesting: an app's code on virtual time (KIT-1..3)")
@MainActor
struct TestDeviceTests {
    /// A delegate that records what it heard and, on leaving the foreground, saves with a background task.
    final class SavingDelegate: ApplicationDelegate {
        var heard: [String] = []
        var saveTask = BackgroundTaskIdentifier.invalid
        var expirations = 0
        /// Whether the save ends by itself after entering the background (false: it waits for expiration).
        let endsSave: Bool

        init(endsSave: Bool = true) { self.endsSave = endsSave }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            heard.append("launch")
            return true
        }
        func applicationDidEnterBackground(_ application: Application) {
            heard.append("background")
            saveTask = application.beginBackgroundTask(withName: "save") { [self] in
                expirations += 1
                application.endBackgroundTask(saveTask)
            }
            if endsSave { application.endBackgroundTask(saveTask) }
        }
    }

    @Test("LC-1, LC-2: the app's own delegate hears launch, foreground and background, then the app is suspended")
    func lifecycle() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.notes") { SavingDelegate() }
        #expect(app.state == .notRunning)
        try await device.open(app)
        #expect(app.callbacks == [.didFinishLaunching(.user), .didBecomeActive])
        #expect(app.state == .active && app.launches == [.user])
        let delegate = try #require(app.delegate as? SavingDelegate)
        #expect(delegate.heard == ["launch"])

        app.clearCallbacks()
        try await device.home()
        #expect(app.callbacks == [.willResignActive, .didEnterBackground])
        #expect(delegate.heard == ["launch", "background"])
        #expect(app.state == .background, "suspended only after the suspend delay")
        try await device.advance(by: .seconds(2))
        #expect(app.isSuspended && app.wasSuspended)
    }

    @Test("BT-1..3: a save begun on entering the background runs 25 s, its expiration handler ends it, then suspension")
    func backgroundTaskExpires() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.notes") { SavingDelegate(endsSave: false) }
        try await device.open(app)
        try await device.home()
        #expect(app.openBackgroundTasks == 1)
        #expect(app.backgroundTimeRemaining == 30)
        try await device.advance(by: .seconds(24))
        #expect(app.state == .background && app.backgroundTimeRemaining == 6)
        let delegate = try #require(app.delegate as? SavingDelegate)
        #expect(delegate.expirations == 0)
        try await device.advance(by: .seconds(2))
        #expect(delegate.expirations == 1, "the expiration handler runs 5 s before the budget is spent")
        #expect(app.callbacks.last == .backgroundTimeExpiring)
        #expect(app.openBackgroundTasks == 0)
        try await device.advance(by: .seconds(2))
        #expect(app.isSuspended)
    }

    /// A weather-style app: registers its refresh at launch, schedules one 15 minutes ahead, and reschedules from its
    /// handler, as the platform's documentation shows.
    final class RefreshingDelegate: ApplicationDelegate {
        static let identifier = "com.example.weather.refresh"
        var runs: [Date] = []

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            TaskScheduler.shared.register(forTaskWithIdentifier: Self.identifier, using: nil) { [self] task in
                runs.append(Date())
                schedule()
                task.setTaskCompleted(success: true)
            }
            return true
        }
        func applicationDidEnterBackground(_ application: Application) { schedule() }

        func schedule() {
            let request = AppRefreshTaskRequest(identifier: Self.identifier)
            request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
            try? TaskScheduler.shared.submit(request)
        }
    }

    /// A device with the weather-style app installed.
    static func weather() async throws -> (TestDevice, TestApp) {
        let device = await TestDevice()
        let app = try device.install(
            bundleIdentifier: "com.example.weather", backgroundModes: ["fetch"],
            taskIdentifiers: [RefreshingDelegate.identifier]
        ) { RefreshingDelegate() }
        return (device, app)
    }

    @Test("SCH-1..4: a refresh scheduled 15 minutes ahead runs no earlier, in the background, and again after it reschedules")
    func refreshRuns() async throws {
        let (device, app) = try await Self.weather()
        try await device.open(app)
        try await device.home()
        let left = device.now
        let explained = try app.explain(RefreshingDelegate.identifier)
        #expect(explained.map(\.identifier) == [RefreshingDelegate.identifier] && explained.first?.kind == "refresh")

        try await device.advance(by: .seconds(14 * 60))
        #expect(!app.callbacks.contains(.runTask(RefreshingDelegate.identifier)), "not before its earliest begin")
        try await device.advance(by: .seconds(24 * 3600))
        let runs = app.callbacks.filter { $0 == .runTask(RefreshingDelegate.identifier) }.count
        #expect(runs >= 2, "the handler's reschedule makes it run again")
        // The app's `Date(timeIntervalSinceNow: 15 * 60)` is fifteen virtual minutes after it left at 08:00.
        #expect(app.log.contains("submitted refresh request '\(RefreshingDelegate.identifier)' not before 08:15:00 UTC"))
        #expect(app.log.filter { $0.hasPrefix("refresh task '\(RefreshingDelegate.identifier)' started") }.count == runs)
        #expect(app.launches.allSatisfy { $0 == .user || $0 == .refresh })
        #expect(device.now.timeIntervalSince(left) == 24 * 3600 + 14 * 60)
        #expect(device.warnings.isEmpty, "\(device.warnings)")
    }

    @Test("LC-6: a force-quit app is killed; opening it again starts a new process with a new delegate")
    func forceQuitAndRelaunch() async throws {
        let device = await TestDevice()
        var made = 0
        let app = try device.install(bundleIdentifier: "com.example.notes") {
            made += 1
            return SavingDelegate()
        }
        try await device.open(app)
        try await device.home()
        try await device.forceQuit(app)
        #expect(app.state == .notRunning && app.exits == ["killed by signal 9"])
        try await device.open(app)
        #expect(made == 2 && app.launches == [.user, .user])
        #expect((app.delegate as? SavingDelegate)?.heard == ["launch"], "the new process's delegate starts afresh")
    }

    @Test("LC-7: an app that exits on suspend hears will-terminate when it leaves and its process exits")
    func exitsOnSuspend() async throws {
        let device = await TestDevice()
        let plist = FileManager.default.temporaryDirectory.appendingPathComponent("exits-\(UUID().uuidString).plist")
        defer { try? FileManager.default.removeItem(at: plist) }
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>com.example.kiosk</string>
            <key>CFBundleExecutable</key><string>Kiosk</string>
            <key>UIApplicationExitsOnSuspend</key><true/>
            </dict></plist>
            """.utf8
        ).write(to: plist)
        let app = try device.install(infoPlist: plist) { SavingDelegate() }
        try await device.open(app)
        try await device.home()
        #expect(app.callbacks.suffix(2) == [.willResignActive, .willTerminate])
        #expect(app.state == .notRunning && app.exits == ["exited with status 0"])
    }

    // MARK: Bad use

    @Test("Advancing time backwards is refused with a clear error and nothing moves")
    func timeForwardOnly() async throws {
        let device = await TestDevice()
        let before = device.now
        await #expect(throws: TestKitError.timeGoesForwardOnly(.seconds(-1))) {
            try await device.advance(by: .seconds(-1))
        }
        await #expect(throws: TestKitError.self) { try await device.advance(to: before.addingTimeInterval(-60)) }
        #expect(device.now == before)
        #expect(TestKitError.timeGoesForwardOnly(.seconds(-1)).description.contains("forward only"))
    }

    @Test("A manifest the daemon would refuse is refused by name; a second app's code cannot share the device")
    func badInstalls() async throws {
        let device = await TestDevice()
        #expect(throws: TestKitError.self) {
            try device.install(bundleIdentifier: "com.example.bad", backgroundModes: ["teleport"]) { SavingDelegate() }
        }
        do {
            try device.install(bundleIdentifier: "com.example.bad", backgroundModes: ["teleport"]) { SavingDelegate() }
        } catch {
            #expect("\(error)".contains("teleport"), "the error names the mode: \(error)")
        }
        #expect(throws: TestKitError.self) {
            try device.install(infoPlist: URL(fileURLWithPath: "/nonexistent/Info.plist")) { SavingDelegate() }
        }
        try device.install(bundleIdentifier: "com.example.one") { SavingDelegate() }
        do {
            try device.install(bundleIdentifier: "com.example.two") { SavingDelegate() }
            Issue.record("a second app's code must be refused")
        } catch let error as TestKitError {
            #expect(error.description.contains("one app's code"))
        }
    }

    /// Polls the system in a task that never waits for anything.
    final class PollingDelegate: ApplicationDelegate {
        var poll: Task<Void, Never>?
        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            poll = Task {
                while !Task.isCancelled {
                    _ = application.backgroundTimeRemaining
                    await Task.yield()
                }
            }
            return true
        }
    }

    @Test("An app that calls the system in a loop without waiting fails the test as never idle, instead of hanging it")
    func neverIdle() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.poller") { PollingDelegate() }
        await #expect(throws: TestKitError.neverIdle(rounds: 10_000)) { try await device.open(app) }
        #expect(TestKitError.neverIdle(rounds: 10_000).description.contains("never fell quiet"))
        (app.delegate as? PollingDelegate)?.poll?.cancel()
    }

    @Test("Asking to run or explain a task the app does not list is refused with the system's message and fix")
    func unknownTask() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.notes") { SavingDelegate() }
        try await device.open(app)
        do {
            _ = try app.explain("com.example.nothing")
            Issue.record("explaining an unlisted identifier must fail")
        } catch let error as TestKitError {
            guard case .refused(let message, let fix) = error else { throw error }
            #expect(message.contains("com.example.nothing") && !fix.isEmpty)
        }
        await #expect(throws: TestKitError.self) { try await app.runTaskNow("com.example.nothing") }
    }

    @Test("Battery, power and network reach the scheduler: a refresh waits below the battery floor")
    func conditions() async throws {
        let (device, app) = try await Self.weather()
        try await device.open(app)
        try await device.setConditions(batteryLevel: 10, charging: false)
        try await device.home()
        try await device.advance(by: .seconds(6 * 3600))
        #expect(!app.callbacks.contains(.runTask(RefreshingDelegate.identifier)))
        let holds = try app.explain(RefreshingDelegate.identifier).flatMap(\.holds)
        #expect(holds.contains { $0.contains("battery") }, "\(holds)")
        try await device.setConditions(charging: true)
        try await device.advance(by: .seconds(3600))
        #expect(app.callbacks.contains(.runTask(RefreshingDelegate.identifier)))
        await #expect(throws: TestKitError.self) { try await device.setConditions(batteryLevel: 101) }
    }
}
