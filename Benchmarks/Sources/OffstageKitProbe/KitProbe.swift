import Foundation
import Offstage
import OffstageTesting

/// The test kit under measurement, in a process of its own (the benchmark harness blocks its main thread while a
/// benchmark runs; the kit's devices live on the main actor). Each story runs `rounds` times; the probe prints one JSON
/// line with each round's wall time (ns), the process's CPU time over all rounds (s) and what the story counted.
///
/// - `lifecycle ROUNDS`: a fresh device; install, open (active), home (suspended), open (active), force-quit — the
///   story the benchmark also runs on the real daemon.
/// - `day ROUNDS`: a typical example test: a weather-style app launched at 08:00 and left, 24 hours on battery with its
///   refreshes, three background pushes from its server and a reminder it scheduled an hour ahead.
/// - `year ROUNDS`: the same app for 365 days, opened by the user for a minute every morning at 08:00.
@main
struct KitProbe {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let rounds = Int(arguments[2]), rounds > 0 else {
            FileHandle.standardError.write(Data("usage: OffstageKitProbe lifecycle|day|year ROUNDS\n".utf8))
            exit(64)
        }
        let story = arguments[1]
        var walls: [UInt64] = []
        var counted: [String: Int] = [:]
        let cpuBefore = cpuSeconds()
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            switch story {
            case "lifecycle": try await lifecycle()
            case "day": counted = try await days(1)
            case "year": counted = try await days(365)
            default:
                FileHandle.standardError.write(Data("unknown story \(story)\n".utf8))
                exit(64)
            }
            let elapsed = ContinuousClock.now - start
            walls.append(UInt64(elapsed.components.seconds) * 1_000_000_000 + UInt64(elapsed.components.attoseconds / 1_000_000_000))
        }
        let report: [String: Any] = ["walls": walls, "cpuSeconds": cpuSeconds() - cpuBefore, "counted": counted]
        print(String(decoding: try JSONSerialization.data(withJSONObject: report), as: UTF8.self))
    }

    /// User and system CPU time of this process so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    @MainActor
    static func lifecycle() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "bench.lifecycle") { QuietDelegate() }
        try await device.open(app)
        try await device.home()
        while app.state != .suspended { guard try await device.advanceToNextEvent() != nil else { break } }
        try await device.open(app)
        try await device.forceQuit(app)
        guard app.state == .notRunning, app.wasSuspended else { throw ProbeError("the lifecycle story did not happen: \(app.state)") }
    }

    @MainActor
    static func days(_ count: Int) async throws -> [String: Int] {
        let device = await TestDevice()
        let app = try device.install(
            bundleIdentifier: "bench.weather", backgroundModes: ["fetch", "remote-notification"],
            taskIdentifiers: [WeatherDelegate.refresh]
        ) { WeatherDelegate() }
        try await device.open(app)
        try await device.home()
        let start = device.now
        var pushes = 0
        for day in 0..<count {
            // The user looks at the weather every morning at 08:00 for a minute (the device starts at 08:00 on day 0):
            // the policy refreshes before the time the app is usually opened, and only content someone looks at.
            if day > 0 {
                try await device.advance(to: start.addingTimeInterval(Double(day * 86_400)))
                try await device.open(app)
                try await device.advance(by: .seconds(60))
                try await device.home()
            }
            // Its server sends a background push at 09:00, 13:00 and 19:00.
            for hour in [1, 5, 11] {
                try await device.advance(to: start.addingTimeInterval(Double(day * 86_400 + hour * 3600)))
                let response = try await device.sendPush(
                    #"{"aps":{"content-available":1},"story":"\#(day)-\#(hour)"}"#, to: app,
                    headers: ["apns-push-type": "background", "apns-priority": "5"])
                if response.isAccepted { pushes += 1 }
            }
        }
        try await device.advance(to: start.addingTimeInterval(Double(count * 86_400)))
        let refreshes = app.callbacks.filter { $0 == .runTask(WeatherDelegate.refresh) }.count
        let handled = app.callbacks.filter { $0 == .other("remoteNotification") }.count
        guard refreshes > 0, handled > 0, !device.shownNotifications.isEmpty else {
            throw ProbeError("the day did not happen: \(refreshes) refreshes, \(handled) pushes handled")
        }
        return ["refreshes": refreshes, "pushesSent": pushes, "pushesHandled": handled, "shown": device.shownNotifications.count]
    }
}

struct ProbeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// An app that does nothing of its own: the lifecycle story is the system's.
@MainActor
final class QuietDelegate: ApplicationDelegate {}

/// A weather-style app: refreshes 15 minutes after each refresh (as the platform's documentation shows), handles its
/// server's background pushes, and schedules a reminder an hour after its launch.
@MainActor
final class WeatherDelegate: ApplicationDelegate {
    static let refresh = "bench.weather.refresh"

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        TaskScheduler.shared.register(forTaskWithIdentifier: Self.refresh, using: nil) { [self] task in
            schedule()
            task.setTaskCompleted(success: true)
        }
        application.registerForRemoteNotifications()
        Task {
            _ = try? await UserNotificationCenter.current().requestAuthorization(options: [.alert])
            var content = NotificationContent()
            content.title = "Umbrella"
            content.body = "Rain from 17:00"
            _ = try? await UserNotificationCenter.current().add(
                NotificationRequest(
                    identifier: "reminder", content: content, trigger: TimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false)))
        }
        return true
    }

    func applicationDidEnterBackground(_ application: Application) { schedule() }

    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable]
    ) async throws -> BackgroundFetchResult {
        .newData
    }

    func schedule() {
        let request = AppRefreshTaskRequest(identifier: Self.refresh)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
        try? TaskScheduler.shared.submit(request)
    }
}
