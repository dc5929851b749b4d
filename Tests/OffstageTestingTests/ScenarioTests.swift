import Foundation
import Offstage
import OffstageTesting
import Testing

/// The decision parts of the acceptance scenarios (S3, S4, S6, S8, S9), written as an app developer would with the kit:
/// the delegates below do what the example apps do, and the expectations are the scenarios' own. The real daemon
/// runs the same stories with the example apps in the integration tests.
@Suite("OffstageTesting: the acceptance scenarios' decisions (KIT-4)")
@MainActor
struct ScenarioTests {
    /// S3's app: a background task on leaving, ended in will-enter-foreground as the cookbook recipe does.
    final class CookbookDelegate: ApplicationDelegate {
        var task = BackgroundTaskIdentifier.invalid
        var expirations = 0
        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool { true }
        func applicationDidEnterBackground(_ application: Application) {
            task = application.beginBackgroundTask(withName: "compute") { [self] in
                expirations += 1
                application.endBackgroundTask(task)
            }
        }
        func applicationWillEnterForeground(_ application: Application) { application.endBackgroundTask(task) }
    }

    @Test("S3 (BT-5): back after 10 s with the task open: no expiration, no termination, foreground time again")
    func comingBackWhileTheTaskIsOpen() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.fibonacci") { CookbookDelegate() }
        try await device.open(app)
        try await device.home()
        try await device.advance(by: .seconds(10))
        #expect(app.backgroundTimeRemaining == 20)
        app.clearCallbacks()
        try await device.open(app)
        #expect(app.callbacks == [.willEnterForeground, .didBecomeActive])
        try await device.advance(by: .seconds(60))
        #expect((app.delegate as? CookbookDelegate)?.expirations == 0 && app.exits.isEmpty)
        #expect(app.backgroundTimeRemaining == nil && app.openBackgroundTasks == 0, "in front: no budget counts")
    }

    @Test("S4 (LC-2): a dismissed interruption resigns and restores active; an accepted one sends the app to the background")
    func interruptions() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.fibonacci") { CookbookDelegate() }
        try await device.open(app)
        app.clearCallbacks()
        try await device.interrupt()
        try await device.endInterruption(accepted: false)
        #expect(app.callbacks == [.willResignActive, .didBecomeActive])
        app.clearCallbacks()
        try await device.interrupt()
        try await device.endInterruption(accepted: true)
        #expect(app.callbacks == [.willResignActive, .didEnterBackground])
        await #expect(throws: TestKitError.self, "ending an interruption when none is in progress is refused") {
            try await device.endInterruption()
        }
    }

    /// S6's news app: sets the minimum fetch interval at launch unless told not to; fetches with new data.
    final class NewsDelegate: ApplicationDelegate {
        let setsInterval: Bool
        var fetches = 0
        init(setsInterval: Bool) { self.setsInterval = setsInterval }
        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            if setsInterval { application.setMinimumBackgroundFetchInterval(Application.backgroundFetchIntervalMinimum) }
            return true
        }
        func application(
            _ application: Application,
            performFetchWithCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
        ) {
            fetches += 1
            completionHandler(.newData)
        }
    }

    @Test("S6 (SCH-4): a simulated fetch launches the app into the background with reason fetch, and it is suspended after")
    func backgroundFetch() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.news", backgroundModes: ["fetch"]) {
            NewsDelegate(setsInterval: true)
        }
        try await app.fetchNow()
        #expect(app.callbacks == [.didFinishLaunching(.fetch), .performFetch])
        #expect((app.delegate as? NewsDelegate)?.fetches == 1)
        try await device.advance(by: .seconds(2))
        #expect(app.isSuspended)
    }

    @Test("S6 (SCH-4): an app whose interval is still never is not woken by the policy, and explain says why")
    func fetchNeverWithoutInterval() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.news", backgroundModes: ["fetch"]) {
            NewsDelegate(setsInterval: false)
        }
        try await device.open(app)
        try await device.home()
        try await device.advance(by: .seconds(24 * 3600))
        #expect(!app.callbacks.contains(.performFetch))
        let fetch = try #require(app.explain().first)
        #expect(fetch.summary.contains("never"), "\(fetch)")
    }

    /// S8's processing app: submits processing that needs external power at launch; checkpoints when it expires.
    final class ProcessingDelegate: ApplicationDelegate {
        static let identifier = "com.example.processing"
        var checkpoints = 0
        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            TaskScheduler.shared.register(forTaskWithIdentifier: Self.identifier, using: nil) { [self] task in
                task.expirationHandler = { [self] in
                    checkpoints += 1
                    task.setTaskCompleted(success: false)
                }
            }
            let request = ProcessingTaskRequest(identifier: Self.identifier)
            request.requiresExternalPower = true
            try? TaskScheduler.shared.submit(request)
            return true
        }
    }

    @Test("S8 (SCH-2, SCH-6, SCH-8): processing waits for power and says so; charging and idle it runs, and checkpoints at its end")
    func processingNeedsPower() async throws {
        let device = await TestDevice()
        let app = try device.install(
            bundleIdentifier: "com.example.processing-app", backgroundModes: ["processing"],
            taskIdentifiers: [ProcessingDelegate.identifier]
        ) { ProcessingDelegate() }
        try await device.open(app)
        try await device.home()
        try await device.advance(by: .seconds(3600))
        #expect(!app.callbacks.contains(.runTask(ProcessingDelegate.identifier)))
        let waiting = try #require(try app.explain(ProcessingDelegate.identifier).first)
        #expect(waiting.holds.contains { $0.contains("power") }, "\(waiting.holds)")

        try await device.setConditions(charging: true)
        try await device.setIdle(true)
        try await device.advance(by: .seconds(3600))
        #expect(app.callbacks.contains(.runTask(ProcessingDelegate.identifier)))
        #expect(app.callbacks.contains(.taskExpiring), "its runtime is over within the hour")
        #expect((app.delegate as? ProcessingDelegate)?.checkpoints == 1)
    }

    @Test("S9 (SET-2, SCH-6): background data off on a metered network holds a refresh that needs network; unmetered runs it")
    func restrictedBackgroundData() async throws {
        let device = await TestDevice()
        let app = try device.install(
            bundleIdentifier: "com.example.weather", backgroundModes: ["fetch"],
            taskIdentifiers: [TestDeviceTests.RefreshingDelegate.identifier]
        ) { TestDeviceTests.RefreshingDelegate() }
        try await device.open(app)
        try await app.setSettings(backgroundData: false)
        try await device.setConditions(network: .metered)
        try await device.home()
        try await device.advance(by: .seconds(6 * 3600))
        let identifier = TestDeviceTests.RefreshingDelegate.identifier
        #expect(!app.callbacks.contains(.runTask(identifier)))
        let holds = try app.explain(identifier).flatMap(\.holds)
        #expect(holds.contains { $0.contains("background data restricted on a metered network") }, "\(holds)")
        try await device.setConditions(network: .unmetered)
        try await device.advance(by: .seconds(6 * 3600))
        #expect(app.callbacks.contains(.runTask(identifier)))
    }
}
