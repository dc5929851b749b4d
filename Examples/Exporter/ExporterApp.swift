import Foundation
import Offstage

/// A photo-library style export as a continued-processing task (SPEC SCH-11, `BGContinuedProcessingTask` on the
/// platform): the user starts an export in the foreground, and it goes on in the background, showing its progress to
/// the user (`offstage apps`, `offstage tasks`), who can cancel it (`offstage cancel-task`).
///
/// An export writes one file per item into `<data dir>/exports/<n>/item-<i>.txt` (the text names the export, the
/// item and the count, then a line of payload), taking `EXPORT_ITEM_MS` per item, and sets `task.progress` after each
/// item. When every item is written it counts the files on disk, prints `export done: N files in exports/<n>` and
/// completes with success. When the task is ended early (the user cancelled it, pressure, no progress for too long)
/// its expiration handler stops the work, prints `export expired at I of N` and completes with failure; the files
/// written so far stay.
///
/// The trigger — the user tapping "Export": with `EXPORT_ON_OPEN=1`, each time the app becomes active (the user
/// opens it, `offstage open`) it submits one new export, numbered from 1 across launches, as
/// `com.example.exporter.export.<n>`. Submitting is only allowed in the foreground, which did-become-active is. With
/// `EXPORT_ON_OPEN` unset the app only runs exports the system starts (a queued export that got its slot).
///
/// Environment (the manifest's `OffstageLinux.Environment`):
/// - `EXPORT_ON_OPEN`: `1` to submit an export each time the app becomes active (default: off).
/// - `EXPORT_ITEMS`: items per export (default 20).
/// - `EXPORT_ITEM_MS`: milliseconds per item (default 200).
/// - `EXPORT_STRATEGY`: `queue` (default: wait for a free slot) or `fail` (refused unless a slot is free now).
///
/// The manifest lists the pattern `com.example.exporter.export.*` in `BGTaskSchedulerPermittedIdentifiers`; the app
/// registers its launch handler for that pattern. Every event is one timestamped line on standard output: `submitted
/// com.example.exporter.export.1`, `submit refused: …`, `export started (…)`, `exported 5 of 20`, `export done: 20
/// files in exports/1`, `export expired at 7 of 20`.
@MainActor
final class ExporterDelegate: ApplicationDelegate {
    static let pattern = "com.example.exporter.export.*"
    static let prefix = "com.example.exporter.export."

    let dataDirectory: String
    let exportOnOpen: Bool
    let items: Int
    let itemTime: Duration
    let strategy: ContinuedProcessingTaskRequest.SubmissionStrategy
    /// The work of each running export, by task identifier.
    var work: [String: Task<Void, Never>] = [:]

    init(environment: [String: String]) {
        dataDirectory = environment["OFFSTAGE_DATA_DIR"] ?? FileManager.default.currentDirectoryPath
        exportOnOpen = environment["EXPORT_ON_OPEN"] == "1"
        items = max(1, environment["EXPORT_ITEMS"].flatMap(Int.init) ?? 20)
        itemTime = .milliseconds(max(0, environment["EXPORT_ITEM_MS"].flatMap(Int.init) ?? 200))
        strategy = environment["EXPORT_STRATEGY"].flatMap(ContinuedProcessingTaskRequest.SubmissionStrategy.init) ?? .queue
    }

    // MARK: Lifecycle

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("did-finish-launching (\(options.reason.rawValue))")
        let registered = TaskScheduler.shared.register(forTaskWithIdentifier: Self.pattern, using: nil) { task in
            guard let task = task as? ContinuedProcessingTask else {
                say("unexpected task \(task); completing it as failed")
                task.setTaskCompleted(success: false)
                return
            }
            self.export(task)
        }
        say("register \(Self.pattern): \(registered)")
        return true
    }

    func applicationDidBecomeActive(_ application: Application) {
        say("did-become-active")
        if exportOnOpen { submitExport() }
    }

    func applicationWillResignActive(_ application: Application) { say("will-resign-active") }
    func applicationDidEnterBackground(_ application: Application) { say("did-enter-background") }
    func applicationWillEnterForeground(_ application: Application) { say("will-enter-foreground") }
    func applicationWillTerminate(_ application: Application) { say("will-terminate") }

    // MARK: Exporting

    /// The user tapped "Export": submit the next export, numbered after every export submitted before.
    func submitExport() {
        let number = (DurableStore.standard.value(Int.self, forKey: "lastExport") ?? 0) + 1
        do {
            try DurableStore.standard.set(number, forKey: "lastExport")
        } catch {
            say("could not save the export number: \(error)")
        }
        let identifier = Self.prefix + "\(number)"
        let request = ContinuedProcessingTaskRequest(
            identifier: identifier, title: "Exporting \(items) items", subtitle: "export \(number)")
        request.strategy = strategy
        do {
            try TaskScheduler.shared.submit(request)
            say("submitted \(identifier) (strategy \(strategy.rawValue))")
        } catch {
            say("submit refused: \(error)")
        }
    }

    /// The launch handler: write the export's files one by one, reporting progress after each.
    func export(_ task: ContinuedProcessingTask) {
        let identifier = task.identifier
        let number = identifier.hasPrefix(Self.prefix) ? String(identifier.dropFirst(Self.prefix.count)) : identifier
        let folder = dataDirectory + "/exports/" + number
        let total = items
        let state = Application.shared.applicationState.rawValue
        say("export started (\(identifier), '\(task.title)', \(total) items, state=\(state))")
        task.progress.totalUnitCount = Int64(total)
        task.progress.completedUnitCount = 0
        task.expirationHandler = {
            self.work[identifier]?.cancel()
            self.work[identifier] = nil
            say("export expired at \(task.progress.completedUnitCount) of \(total) (\(identifier))")
            task.setTaskCompleted(success: false)
        }
        let step = itemTime
        work[identifier] = Task {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                for item in 1...total {
                    try await Task.sleep(for: step)  // throws once the export is cancelled
                    try Self.write(item: item, of: total, export: number, into: folder)
                    task.progress.completedUnitCount = Int64(item)
                    say("exported \(item) of \(total)")
                }
            } catch is CancellationError {
                return  // the expiration handler completed the task
            } catch {
                say("export failed at \(task.progress.completedUnitCount) of \(total): \(error)")
                work[identifier] = nil
                task.setTaskCompleted(success: false)
                return
            }
            let written = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.filter { $0.hasPrefix("item-") }
            say("export done: \(written?.count ?? 0) files in exports/\(number)")
            work[identifier] = nil
            task.setTaskCompleted(success: true)
        }
    }

    /// One item of the export: a small text file, written whole (a reader never sees half of it).
    nonisolated static func write(item: Int, of total: Int, export: String, into folder: String) throws {
        let name = String(format: "item-%04d.txt", item)
        let payload = String(repeating: "\(item % 10)", count: 64)
        let text = "export \(export) item \(item) of \(total)\n\(payload)\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/" + name), options: .atomic)
    }
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
struct ExporterApp {
    @MainActor static func main() {
        Application.main(delegate: ExporterDelegate(environment: ProcessInfo.processInfo.environment))
    }
}
