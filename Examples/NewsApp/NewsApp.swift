import Dispatch
import Foundation
import Offstage
import Synchronization

/// The classic background fetch cookbook app: a news reader that asks to be woken as often as the system allows,
/// and in each background fetch "downloads" the latest headlines. Half of the fetches find new items, at random;
/// the headline count is kept in the ``DurableStore`` so it survives termination.
///
/// Every event is one line on standard output: the launch and its reason, the interval it asked for, each fetch
/// with its number, what it found and the result it reported.
///
/// Options (in the manifest's `OffstageLinux.Arguments`):
/// - `--seed N`: seed the random choice (by default it is seeded from the pid and the time, and printed).
/// - `--fetch-seconds S`: how long a simulated download takes (default 0.2).
@MainActor
final class NewsAppDelegate: ApplicationDelegate {
    let fetchSeconds: Double
    let random: SeededRandom
    var fetchNumber = 0

    init(arguments: [String]) {
        let seed = option("--seed", in: arguments).flatMap(UInt64.init)
            ?? UInt64(UInt32(bitPattern: getpid())) << 32 ^ UInt64(Date().timeIntervalSince1970 * 1000)
        random = SeededRandom(seed: seed)
        fetchSeconds = option("--fetch-seconds", in: arguments).flatMap(Double.init) ?? 0.2
        say("random seed \(seed)")
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        let headlines = DurableStore.standard.value(Int.self, forKey: "headlines") ?? 0
        fetchNumber = DurableStore.standard.value(Int.self, forKey: "fetches") ?? 0
        say("did-finish-launching (\(options.reason.rawValue)); \(headlines) headlines, \(fetchNumber) fetches so far")
        application.setMinimumBackgroundFetchInterval(Application.backgroundFetchIntervalMinimum)
        say("minimum background fetch interval set to minimum")
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { say("did-become-active") }
    func applicationWillResignActive(_ application: Application) { say("will-resign-active") }
    func applicationDidEnterBackground(_ application: Application) { say("did-enter-background") }
    func applicationWillEnterForeground(_ application: Application) { say("will-enter-foreground") }
    func applicationWillTerminate(_ application: Application) { say("will-terminate") }

    func application(
        _ application: Application,
        performFetchWithCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        fetchNumber += 1
        let number = fetchNumber
        try? DurableStore.standard.set(number, forKey: "fetches")
        say("fetch \(number) started (state=\(application.applicationState.rawValue))")
        // The download happens off the main thread; the completion handler may be called from any thread.
        let newItems = random.nextBool() ? random.next(in: 1...5) : 0
        DispatchQueue.global().asyncAfter(deadline: .now() + fetchSeconds) {
            let store = DurableStore.standard
            let total = (store.value(Int.self, forKey: "headlines") ?? 0) + newItems
            let result: BackgroundFetchResult
            do {
                try store.set(total, forKey: "headlines")
                result = newItems > 0 ? .newData : .noData
            } catch {
                say("fetch \(number): could not save: \(error)")
                result = .failed
            }
            let found = newItems > 0 ? "\(newItems) new headlines" : "no new headlines"
            say("fetch \(number) finished: \(found), \(total) in all; completing with \(result.rawValue)")
            completionHandler(result)
        }
    }
}

/// A small seeded generator (SplitMix64), so that a run can be repeated with `--seed`.
final class SeededRandom: Sendable {
    private let state: Mutex<UInt64>

    init(seed: UInt64) { state = Mutex(seed) }

    func nextBits() -> UInt64 {
        state.withLock { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    func nextBool() -> Bool { nextBits() >> 63 == 1 }

    func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(nextBits() % UInt64(range.count))
    }
}

func option(_ name: String, in arguments: [String]) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

func say(_ text: String) { print(timestamp() + " " + text) }

func timestamp() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var time = tm()
    var seconds = now.tv_sec
    localtime_r(&seconds, &time)
    return String(format: "%02d:%02d:%02d.%03d", time.tm_hour, time.tm_min, time.tm_sec, now.tv_nsec / 1_000_000)
}

@main
struct NewsAppMain {
    @MainActor static func main() {
        Application.main(delegate: NewsAppDelegate(arguments: CommandLine.arguments))
    }
}
