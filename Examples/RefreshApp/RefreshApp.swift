import Dispatch
import Foundation
import Offstage
import Synchronization

/// The app-refresh recipe of the BackgroundTasks framework: register a launch handler for `com.example.refresh`
/// at launch, submit an app-refresh request for 60 s from now (`--earliest-seconds`), and in the handler resubmit, save the time of the
/// refresh in the ``DurableStore`` and complete the task. The expiration handler completes with failure.
///
/// At launch it also tries to register `com.example.unlisted`, which the manifest does not list, and prints that
/// the scheduler refused it (SPEC SCH-1).
///
/// Every event is one line on standard output.
///
/// Options (in the manifest's `OffstageLinux.Arguments`):
/// - `--refresh-seconds S`: take S seconds (on another thread) to refresh instead of completing at once, so that
///   the expiration handler can be seen (`offstage expire-task`).
/// - `--earliest-seconds S`: submit requests with their earliest begin date S seconds ahead (default 60).
/// - `--register-late`: also try to register a launch handler when the app first becomes active, after launch has
///   finished, and print that the scheduler refused it (SPEC SCH-1).
@MainActor
final class RefreshAppDelegate: ApplicationDelegate {
    static let refreshIdentifier = "com.example.refresh"
    static let unlistedIdentifier = "com.example.unlisted"
    let refreshSeconds: Double
    let earliestSeconds: Double
    var registersLate: Bool

    init(arguments: [String]) {
        refreshSeconds = option("--refresh-seconds", in: arguments).flatMap(Double.init) ?? 0
        earliestSeconds = option("--earliest-seconds", in: arguments).flatMap(Double.init) ?? 60
        registersLate = arguments.contains("--register-late")
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        let last = DurableStore.standard.value(Double.self, forKey: "lastRefresh").map { "last refresh at \(clock(Date(timeIntervalSince1970: $0)))" }
        say("did-finish-launching (\(options.reason.rawValue)); \(last ?? "never refreshed")")

        let registered = TaskScheduler.shared.register(forTaskWithIdentifier: Self.refreshIdentifier, using: nil) { task in
            self.handleAppRefresh(task as! AppRefreshTask)
        }
        say("register \(Self.refreshIdentifier): \(registered)")

        // Not in BGTaskSchedulerPermittedIdentifiers: the scheduler refuses it (and says why on standard error).
        let unlisted = TaskScheduler.shared.register(forTaskWithIdentifier: Self.unlistedIdentifier, using: nil) { task in
            task.setTaskCompleted(success: false)
        }
        say("register \(Self.unlistedIdentifier): \(unlisted)")

        scheduleAppRefresh()
        return true
    }

    func applicationDidBecomeActive(_ application: Application) {
        say("did-become-active")
        if registersLate {
            registersLate = false
            // Too late: launch has finished (SPEC SCH-1).
            let late = TaskScheduler.shared.register(forTaskWithIdentifier: Self.refreshIdentifier + ".late", using: nil) { task in
                task.setTaskCompleted(success: false)
            }
            say("register \(Self.refreshIdentifier).late after launch: \(late)")
        }
    }
    func applicationWillResignActive(_ application: Application) { say("will-resign-active") }
    func applicationDidEnterBackground(_ application: Application) { say("did-enter-background") }
    func applicationWillEnterForeground(_ application: Application) { say("will-enter-foreground") }
    func applicationWillTerminate(_ application: Application) { say("will-terminate") }

    func scheduleAppRefresh() {
        let request = AppRefreshTaskRequest(identifier: Self.refreshIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: earliestSeconds)
        do {
            try TaskScheduler.shared.submit(request)
            say("submitted refresh request \(Self.refreshIdentifier), earliest begin \(clock(request.earliestBeginDate!))")
        } catch {
            say("could not submit refresh request: \(error)")
        }
    }

    func handleAppRefresh(_ task: AppRefreshTask) {
        say("refresh task \(task.identifier) started (state=\(Application.shared.applicationState.rawValue))")
        // Schedule the next refresh first, as the recipe does: this run may be cut short.
        scheduleAppRefresh()
        let expired = Flag()
        task.expirationHandler = {
            expired.set()
            say("expiration handler: completing \(task.identifier) with failure")
            task.setTaskCompleted(success: false)
        }
        let finish: @Sendable () -> Void = {
            guard !expired.isSet else { return say("refresh of \(task.identifier) finished after it expired; result dropped") }
            let now = Date()
            do {
                try DurableStore.standard.set(now.timeIntervalSince1970, forKey: "lastRefresh")
                say("refreshed at \(clock(now)); completing \(task.identifier) with success")
                task.setTaskCompleted(success: true)
            } catch {
                say("could not save the refresh time: \(error); completing \(task.identifier) with failure")
                task.setTaskCompleted(success: false)
            }
        }
        if refreshSeconds > 0 {
            DispatchQueue.global().asyncAfter(deadline: .now() + refreshSeconds, execute: finish)
        } else {
            finish()
        }
    }
}

/// A flag one thread sets and another reads.
final class Flag: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}

func option(_ name: String, in arguments: [String]) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

func say(_ text: String) { print(timestamp() + " " + text) }

func timestamp() -> String { clock(Date()) }

/// A wall-clock time with milliseconds, `HH:MM:SS.mmm`.
func clock(_ date: Date) -> String {
    let seconds = date.timeIntervalSince1970
    var whole = time_t(seconds.rounded(.down))
    var time = tm()
    localtime_r(&whole, &time)
    let milliseconds = Int((seconds - seconds.rounded(.down)) * 1000)
    return String(format: "%02d:%02d:%02d.%03d", time.tm_hour, time.tm_min, time.tm_sec, milliseconds)
}

@main
struct RefreshAppMain {
    @MainActor static func main() {
        Application.main(delegate: RefreshAppDelegate(arguments: CommandLine.arguments))
    }
}
