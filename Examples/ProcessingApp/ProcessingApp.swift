import Foundation
import Offstage

/// A maintenance job as a processing task: it works through a list of items in steps, saving its progress in the
/// ``DurableStore`` as it goes. When its time runs out the expiration handler stops the work, saves a checkpoint,
/// prints `checkpointed at N` and completes with failure; the next run resumes from the checkpoint. Once every
/// item is done it starts over on the next run.
///
/// At launch it registers `com.example.processing` and submits a processing request that needs external power
/// and no network, then prints the pending requests. Every event is one line on standard output.
///
/// Options (in the manifest's `OffstageLinux.Arguments`):
/// - `--items N`: how many items the job has (default 300).
/// - `--step-ms M`: how long one item takes, in milliseconds (default 100).
@MainActor
final class ProcessingAppDelegate: ApplicationDelegate {
    static let identifier = "com.example.processing"
    /// Progress is saved every this many items, and when the task expires.
    static let checkpointEvery = 10
    let itemCount: Int
    let step: Duration
    /// The next item to process.
    var next = 0
    var checksum: UInt64 = 0
    var work: Task<Void, Never>?

    init(arguments: [String]) {
        itemCount = max(1, option("--items", in: arguments).flatMap(Int.init) ?? 300)
        step = .milliseconds(max(0, option("--step-ms", in: arguments).flatMap(Int.init) ?? 100))
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        next = DurableStore.standard.value(Int.self, forKey: "nextItem") ?? 0
        checksum = DurableStore.standard.value(UInt64.self, forKey: "checksum") ?? 0
        say("did-finish-launching (\(options.reason.rawValue)); checkpoint at item \(next) of \(itemCount)")
        let registered = TaskScheduler.shared.register(forTaskWithIdentifier: Self.identifier, using: nil) { task in
            self.handleProcessing(task as! ProcessingTask)
        }
        say("register \(Self.identifier): \(registered)")
        scheduleProcessing()
        Task {
            let pending = await TaskScheduler.shared.pendingTaskRequests()
            say("pending requests: \(pending.isEmpty ? "none" : pending.map(\.description).joined(separator: ", "))")
        }
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { say("did-become-active") }
    func applicationWillResignActive(_ application: Application) { say("will-resign-active") }
    func applicationWillEnterForeground(_ application: Application) { say("will-enter-foreground") }

    func applicationDidEnterBackground(_ application: Application) {
        say("did-enter-background")
        checkpoint()
    }

    func applicationWillTerminate(_ application: Application) {
        checkpoint()
        say("will-terminate; checkpointed at \(next)")
    }

    func scheduleProcessing() {
        let request = ProcessingTaskRequest(identifier: Self.identifier)
        request.requiresExternalPower = true
        request.requiresNetworkConnectivity = false
        do {
            try TaskScheduler.shared.submit(request)
            say("submitted processing request \(Self.identifier) (requires external power, no network)")
        } catch {
            say("could not submit processing request: \(error)")
        }
    }

    func handleProcessing(_ task: ProcessingTask) {
        say("processing task \(task.identifier) started at item \(next) of \(itemCount)")
        work?.cancel()
        task.expirationHandler = {
            self.work?.cancel()
            self.work = nil
            self.checkpoint()
            say("expiration handler: checkpointed at \(self.next)")
            task.setTaskCompleted(success: false)
            self.scheduleProcessing()
        }
        work = Task {
            while next < itemCount {
                guard let value = try? await Self.process(next, taking: step) else { return }  // cancelled
                checksum = checksum &* 31 &+ value
                next += 1
                if next % Self.checkpointEvery == 0 {
                    checkpoint()
                    say("progress: \(next) of \(itemCount) items")
                }
            }
            say("processed all \(itemCount) items (checksum \(checksum)); completing with success")
            (next, checksum) = (0, 0)
            checkpoint()
            work = nil
            task.setTaskCompleted(success: true)
            scheduleProcessing()
        }
    }

    /// One item's work, off the main actor; throws when the task running it is cancelled.
    nonisolated static func process(_ item: Int, taking step: Duration) async throws -> UInt64 {
        try await Task.sleep(for: step)
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in "item-\(item)".utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return hash
    }

    func checkpoint() {
        do {
            try DurableStore.standard.set(next, forKey: "nextItem")
            try DurableStore.standard.set(checksum, forKey: "checksum")
        } catch {
            say("could not save the checkpoint: \(error)")
        }
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
struct ProcessingAppMain {
    @MainActor static func main() {
        Application.main(delegate: ProcessingAppDelegate(arguments: CommandLine.arguments))
    }
}
