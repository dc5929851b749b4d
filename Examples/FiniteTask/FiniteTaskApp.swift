import Dispatch
import Foundation
import Offstage

/// The classic finite-length task tutorial: compute Fibonacci numbers every 0.1 s; on entering the background,
/// begin a background task, print the time remaining every second, and end the task in its expiration handler.
///
/// Options (in the manifest's `OffstageLinux.Arguments`):
/// - `--work SECONDS`: instead of waiting for expiration, hand the work to another thread that ends the task
///   after SECONDS (scenario S1).
/// - `--end-on-foreground`: end the task in will-enter-foreground, as the cookbook recipe does (scenario S3).
@MainActor
final class FiniteTaskDelegate: ApplicationDelegate {
    let workSeconds: Double?
    let endsOnForeground: Bool
    var task: BackgroundTaskIdentifier = .invalid
    var index = 0
    var previous: UInt64 = 0
    var current: UInt64 = 1
    var timers: [DispatchSourceTimer] = []

    init(arguments: [String]) {
        workSeconds = arguments.firstIndex(of: "--work").flatMap { arguments.indices.contains($0 + 1) ? Double(arguments[$0 + 1]) : nil }
        endsOnForeground = arguments.contains("--end-on-foreground")
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        // Continue the sequence where a previous run saved it.
        index = DurableStore.standard.value(Int.self, forKey: "index") ?? 0
        (previous, current) = (0, 1)
        for _ in 0..<index { step() }
        say("did-finish-launching (\(options.reason.rawValue)); resuming at fib(\(index))")
        every(.milliseconds(100)) { $0.step() }
        every(.seconds(1)) { $0.report() }
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { say("did-become-active") }
    func applicationWillResignActive(_ application: Application) { say("will-resign-active") }

    func applicationDidEnterBackground(_ application: Application) {
        say("did-enter-background")
        try? DurableStore.standard.set(index, forKey: "index")
        task = application.beginBackgroundTask(withName: "fibonacci") { [weak self] in
            guard let self else { return }
            self.say("expiration handler: ending task \(self.task.rawValue)")
            application.endBackgroundTask(self.task)
            self.task = .invalid
        }
        say("began background task \(task.rawValue)")
        if let workSeconds {
            let task = task
            // The work runs on another thread, which ends the task when it is done (scenario S1).
            Thread.detachNewThread {
                let end = Date().addingTimeInterval(workSeconds)
                var spin: UInt64 = 0
                while Date() < end { spin &+= 1 }
                print(timestamp() + " background work done after \(workSeconds) s; ending task \(task.rawValue)")
                Application.shared.endBackgroundTask(task)
            }
        }
    }

    func applicationWillEnterForeground(_ application: Application) {
        say("will-enter-foreground")
        if endsOnForeground, task != .invalid {
            say("ending task \(task.rawValue) on return to the foreground")
            application.endBackgroundTask(task)
            task = .invalid
        }
    }

    func applicationWillTerminate(_ application: Application) {
        try? DurableStore.standard.set(index, forKey: "index")
        say("will-terminate")
    }

    func step() {
        (previous, current) = (current, previous &+ current)
        index += 1
        if index > 90 { (previous, current, index) = (0, 1, 0) }  // stay within UInt64
    }

    func report() {
        let remaining = Application.shared.backgroundTimeRemaining
        let text = remaining == .greatestFiniteMagnitude ? "max" : String(format: "%.1f", remaining)
        say("state=\(Application.shared.applicationState.rawValue) backgroundTimeRemaining=\(text) fib(\(index))=\(previous)")
    }

    func every(_ interval: DispatchTimeInterval, _ action: @escaping @MainActor (FiniteTaskDelegate) -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in
            MainActor.assumeIsolated {
                if let self { action(self) }
            }
        }
        timer.resume()
        timers.append(timer)
    }

    func say(_ text: String) { print(timestamp() + " " + text) }
}

func timestamp() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var time = tm()
    var seconds = now.tv_sec
    localtime_r(&seconds, &time)
    return String(format: "%02d:%02d:%02d.%03d", time.tm_hour, time.tm_min, time.tm_sec, now.tv_nsec / 1_000_000)
}

@main
struct FiniteTaskApp {
    @MainActor static func main() {
        Application.main(delegate: FiniteTaskDelegate(arguments: CommandLine.arguments))
    }
}
