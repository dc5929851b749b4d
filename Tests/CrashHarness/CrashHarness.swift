import Foundation
import OffstageCore
import OffstageProtocol
import OffstageSimulator
import TestProcesses

/// The crash harness: drives a real `offstaged` with a seeded mix of operations from the CLI and from real apps,
/// kills it with SIGKILL between calls and in the middle of them, restarts it, and after every restart checks that
/// what was acknowledged survived and nothing was left behind (see ``CrashInvariants``).
///
///     CrashHarness [--cycles N] [--seed S] [--keep]
///
/// Local notifications are part of the mix (``NotificationLedger``): a real app adds them from inside, and the kills
/// are aimed at the `Add` calls, at due times and at bursts. So are pushes (``PushLedger``): an app server sends them
/// to the daemon's gateway for a real app, and kills land while its requests are in flight. So are background
/// downloads (``TransferLedger``): two real apps fetch files from a private nginx while the daemon is killed under them.
/// So is continued processing (``ContinuedLedger``): two real Exporter apps run exports the user starts, cancels and
/// force-quits, and some kills are aimed at an export's end, a cancel and a submit.
///
/// Exit status 0 when no invariant was broken, 1 otherwise (each violation is printed with its cycle, so a run is
/// replayed with the same seed). `--keep` leaves the working folder for inspection.
@main
struct CrashHarness {
    static func main() {
        // The Add client the harness runs inside the notification app's cgroup (see `scheduleNotifications`).
        if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--add-client" {
            AddClient.run(socket: CommandLine.arguments[2], requests: CommandLine.arguments[3])
        }
        var cycles = 50
        var seed: UInt64 = 1
        var keep = false
        var memoryEpisodes: Int?
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--cycles": cycles = arguments.popFirst().flatMap(Int.init) ?? cycles
            case "--seed": seed = arguments.popFirst().flatMap(UInt64.init) ?? seed
            case "--keep": keep = true
            case "--memory-episodes": memoryEpisodes = arguments.popFirst().flatMap(Int.init) ?? 10
            default:
                FileHandle.standardError.write(
                    Data("usage: CrashHarness [--cycles N] [--seed S] [--keep] | --memory-episodes N [--seed S]\n".utf8))
                exit(64)
            }
        }
        // Output to a pipe whose reader went away must not kill the harness before it has ended its processes.
        signal(SIGPIPE, SIG_IGN)
        if let memoryEpisodes { runMemoryEpisodes(memoryEpisodes, seed: seed) }
        do {
            let run = try CrashRun(seed: seed)
            // Interrupted, it still ends the daemon and the apps it started, by pid, and removes its folder.
            let interrupted = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
            signal(SIGINT, SIG_IGN)
            interrupted.setEventHandler {
                run.cleanUp()
                exit(130)
            }
            interrupted.resume()
            let report = run.run(cycles: cycles)
            if !keep {
                run.cleanUp()
            } else {
                run.nginx?.stop()  // the server is ended whatever happens; the daemon's folder is kept
                print("kept \(run.daemon.root)")
            }
            print(report.summary)
            exit(report.violations.isEmpty ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("crash harness: \(error)\n".utf8))
            exit(2)
        }
    }
}

/// The apps the harness installs: each a real example app, chosen for what it does in the background.
struct HarnessApp {
    var id: String
    var example: String
    var manifest: [String: Any]

    static var all: [HarnessApp] { [
        // Begins a background task when it leaves, ends it after its work.
        HarnessApp(id: "com.crash.finite", example: "FiniteTask", manifest: [:]),
        // Submits a refresh at launch (an hour ahead, so only run-task runs it).
        HarnessApp(
            id: "com.crash.refresh", example: "RefreshApp",
            manifest: [
                "UIBackgroundModes": ["fetch"], "BGTaskSchedulerPermittedIdentifiers": ["com.example.refresh"],
                "OffstageLinux": ["Arguments": ["--earliest-seconds", "3600"]],
            ]),
        // Legacy fetch.
        HarnessApp(id: "com.crash.news", example: "NewsApp", manifest: ["UIBackgroundModes": ["fetch"]]),
        // Exits on suspend and hangs in will-terminate: every uninstall of it takes the watchdog's time.
        HarnessApp(
            id: "com.crash.hang", example: "ExitsOnSuspend",
            manifest: ["UIApplicationExitsOnSuspend": true, "OffstageLinux": ["Arguments": ["--hang-on-terminate"]]]),
    ] }
}

/// One run: a daemon, its apps' bundles, the seeded generator, what was acknowledged, and the figures.
final class CrashRun {
    let daemon: HarnessDaemon
    var random: SeededGenerator
    /// The notification decisions draw from their own generator, so the operations a seed gives are the same as
    /// before notifications were part of the mix.
    var notificationRandom: SeededGenerator
    var notifications = NotificationLedger()
    /// The push decisions draw from their own generator too.
    var pushRandom: SeededGenerator
    var pushes = PushLedger()
    /// The transfer decisions draw from their own generator too.
    var transferRandom: SeededGenerator
    var transfers = TransferLedger()
    /// The continued-processing decisions draw from their own generator too.
    var continuedRandom: SeededGenerator
    var continued = ContinuedLedger()
    /// The private nginx the downloaders fetch from (from the first start).
    var nginx: NginxServer?
    /// The app server, once the push app registered and its key was added (at the first start).
    var pushServer: PushAppServer?
    /// Add clients running, to end them by pid if the harness is interrupted.
    var clientPids: Set<Int32> = []
    var acknowledged = AcknowledgedState()
    var report = CrashReport()
    var cycle = 0
    /// Every pid of an app the harness saw, to end them by pid at the end whatever happened.
    var seenPids: Set<Int32> = []
    /// The usage rows last shown, by app, day and kind (SPEC SET-3).
    var usageSeen: [String: ControlInterface.UsageRow] = [:]
    /// Where the usage window starts: the day before the run began, fixed for the whole run.
    let usageSince: String = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date().addingTimeInterval(-86_400))
    }()

    init(seed: UInt64) throws {
        random = SeededGenerator(seed: seed)
        notificationRandom = SeededGenerator(seed: seed ^ 0x6E6F_7469_6669_6361)
        pushRandom = SeededGenerator(seed: seed ^ 0x7075_7368_6573_2121)
        transferRandom = SeededGenerator(seed: seed ^ 0x7472_616E_7366_6572)
        continuedRandom = SeededGenerator(seed: seed ^ 0x636F_6E74_696E_7565)
        report.seed = seed
        let root = NSTemporaryDirectory() + "offstage-crash-\(seed)-\(getpid())"
        try? FileManager.default.removeItem(atPath: root)
        daemon = try HarnessDaemon(root: root, settings: [
            "suspendDelay": 0.2, "willTerminateTimeout": 1, "terminationGrace": 0.4, "didEnterBackgroundTimeout": 1,
            "callbackTimeout": 1, "backgroundTaskBudget": 6, "expirationWarning": 1, "reattachTimeout": 3,
            // Repeating notifications every few seconds, so they repeat within a run; every delivery kept, so a
            // duplicate or a gap cannot hide behind the trimming of the delivered list.
            "minimumNotificationRepeatInterval": 1, "maximumDeliveredNotificationsPerApp": 10_000,
            // Background pushes: a few wakes at once and one more a second, so some are held and coalesced and the
            // held one is released within the run; a handler that hangs is cut off after 5 s, not 30.
            "backgroundPushBurst": 4, "backgroundPushesPerHour": 3600, "remoteNotificationTime": 5,
        ])
        for app in HarnessApp.all + [HarnessApp.alarm, HarnessApp.messenger] { try makeBundle(app) }
    }

    func bundlePath(_ app: HarnessApp) -> String { daemon.root + "/source/" + app.id }

    func makeBundle(_ app: HarnessApp) throws {
        let folder = bundlePath(app)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var manifest: [String: Any] = ["CFBundleIdentifier": app.id, "CFBundleExecutable": app.example]
        manifest.merge(app.manifest) { _, new in new }
        try PropertyListSerialization.data(fromPropertyList: manifest, format: .xml, options: 0)
            .write(to: URL(fileURLWithPath: folder + "/Info.plist"))
        try FileManager.default.copyItem(
            atPath: HarnessDaemon.products.appendingPathComponent(app.example).path, toPath: folder + "/" + app.example)
    }

    func violation(_ text: String) {
        report.violations.append("cycle \(cycle): \(text)")
        FileHandle.standardError.write(Data("VIOLATION cycle \(cycle): \(text)\n".utf8))
    }

    func run(cycles: Int) -> CrashReport {
        let started = Date()
        for number in 1...max(1, cycles) {
            cycle = number
            do {
                if number > 1, notificationRandom.chance(0.12) {
                    try daemon.startAndCrash(after: notificationRandom.uniform(0, 0.15))
                    report.notifications.killsDuringStart += 1
                }
                let recovery = try daemon.start()
                report.recoveries.append(recovery)
                if number == 1 {
                    try installNotificationApp()
                    try setUpPushes()
                    try setUpTransfers()
                    try setUpContinued()
                }
                if number > 1 { try checkAfterRestart() }
                let operations = 1 + random.index(below: 6)
                let plan = notificationPlan()
                let pushing = pushPlan(notificationPlan: plan)
                if pushing == .batch { try sendPushes(killing: false) }
                try driveTransfers()
                try driveContinued()
                // The batch of notifications goes before one of the operations, or after them all when the kill is
                // aimed at its Add calls.
                let batchAt = plan.map { $0 == .midAdd ? operations : notificationRandom.index(below: operations) } ?? -1
                var burstDue: Double?
                for index in 0..<operations {
                    if index == batchAt { burstDue = try scheduleNotifications(burst: plan == .burst, killing: false).burstDue }
                    // Drawn as before notifications were in the mix; a kill aimed elsewhere takes the place of this one.
                    let drawn = index == operations - 1 && random.chance(0.5)
                    let midCall = drawn && (plan == nil || plan == .ordinary) && pushing != .killDuringAccepts
                    try perform(randomOperation(), killingMidCall: midCall)
                    if !midCall, daemon.process?.isRunning != true { violation("the daemon died by itself") }
                }
                if batchAt == operations { _ = try scheduleNotifications(burst: false, killing: true) }
                if pushing == .killDuringAccepts { try sendPushes(killing: true) }
                if plan == .atDue || plan == .burst {
                    switch killAroundDue(burstDue: plan == .burst ? burstDue : nil) {
                    case .burst: report.notifications.killsAimedAtBurst += 1
                    case .atDue: report.notifications.killsAimedAtDue += 1
                    default: break
                    }
                }
                try aimContinuedKill()
                daemon.crash()
                report.crashes += 1
            } catch {
                violation("\(error)")
                daemon.crash()
            }
            // Now and then the daemon stays down a while, so due times pass while it is down (they fire at start, late
            // after a second), and rarely longer than a repeat interval (the missed times of a repeating request fire
            // once).
            let pause = notificationRandom.unit()
            if pause < 0.04 {
                usleep(UInt32(notificationRandom.uniform(2.5, 5) * 1_000_000))
            } else if pause < 0.27 {
                usleep(UInt32(notificationRandom.uniform(0, 1.5) * 1_000_000))
            }
            if number % 10 == 0 {
                print("\(number) cycles, \(report.violations.count) violations")
                fflush(nil)  // progress shows when the output is a file or a pipe
            }
        }
        finishGracefully()
        report.transfers = transfers.figures
        report.continued = continued.figures
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    // MARK: Operations

    enum Operation {
        case install(HarnessApp), uninstall(HarnessApp), open(HarnessApp), home, lock, unlock, forceQuit(HarnessApp)
        case appSetting(HarnessApp, String, Bool), deviceSetting(String, Bool), runRefresh, fetch, observeTasks
    }

    func randomOperation() -> Operation {
        let app = HarnessApp.all[random.index(below: HarnessApp.all.count)]
        let roll = random.index(below: 100)
        switch roll {
        case 0..<20: return .install(app)
        case 20..<30: return .uninstall(app)
        case 30..<50: return .open(app)
        case 50..<58: return .home
        case 58..<61: return .lock
        case 61..<64: return .unlock
        case 64..<67: return .forceQuit(app)
        case 67..<78:
            let names = AcknowledgedState.appDefaults.keys.sorted()
            let name = names[random.index(below: names.count)]
            return .appSetting(app, name, random.chance(0.5))
        case 78..<85:
            // Multitasking off is rare and short-lived: it ends every background app (SPEC LC-7).
            let names = ["background-refresh", "low-power", "data-saver", "multitasking"]
            let name = names[random.index(below: names.count)]
            return .deviceSetting(name, name == "multitasking" ? random.chance(0.7) : random.chance(0.5))
        case 85..<91: return .runRefresh
        case 91..<94: return .fetch
        default: return .observeTasks
        }
    }

    func arguments(of operation: Operation) -> [String] {
        switch operation {
        case .install(let app): ["install", bundlePath(app)]
        case .uninstall(let app): ["uninstall", app.id]
        case .open(let app): ["open", app.id]
        case .home: ["home"]
        case .lock: ["lock"]
        case .unlock: ["unlock"]
        case .forceQuit(let app): ["force-quit", app.id]
        case .appSetting(let app, let name, let value): ["settings", "--app", app.id, "\(name)=\(value ? "on" : "off")"]
        case .deviceSetting(let name, let value): ["settings", "\(name)=\(value ? "on" : "off")"]
        case .runRefresh: ["run-task", "com.crash.refresh", "com.example.refresh"]
        case .fetch: ["fetch", "com.crash.news"]
        case .observeTasks: ["--json", "tasks"]
        }
    }

    /// Runs one operation; with `killingMidCall`, kills the daemon a random moment after the call starts.
    func perform(_ operation: Operation, killingMidCall: Bool) throws {
        report.operations += 1
        let started = try daemon.startCLI(arguments(of: operation))
        if killingMidCall {
            usleep(UInt32(random.index(below: 30_001)))
            daemon.crash()
            report.midCallKills += 1
        }
        let output = daemon.finish(started)
        let succeeded = output.status == 0
        if succeeded { report.acknowledged += 1 }
        // Killed in the middle, a call that did not succeed may or may not have taken effect.
        let unknown = !succeeded && killingMidCall
        if unknown { report.uncertain += 1 }
        switch operation {
        case .install(let app):
            if succeeded {
                acknowledged.acknowledgeInstall(app.id)
            } else if unknown {
                // An upgrade of an installed app changes nothing the checks read; a fresh install may or may not be there.
                if acknowledged.installation(app.id) != .known(true) { acknowledged.uncertainInstallation(app.id) }
            } else if !output.stderr.contains("still being uninstalled") {
                violation("install \(app.id) failed: \(output.stderr)")
            }
        case .uninstall(let app):
            forgetUsage(of: app.id)
            if succeeded {
                acknowledged.acknowledgeUninstall(app.id)
            } else if unknown {
                if acknowledged.installation(app.id) != .known(false) { acknowledged.uncertainInstallation(app.id) }
            } else if output.status == 3 {
                if acknowledged.installation(app.id) == .known(true) { violation("installed \(app.id) said not installed") }
            } else {
                violation("uninstall \(app.id) failed: \(output.stderr)")
            }
        case .appSetting(let app, let name, let value):
            if succeeded {
                acknowledged.appSettings[app.id, default: [:]][name] = .known(value)
            } else if unknown {
                if acknowledged.appSettings[app.id] != nil { acknowledged.appSettings[app.id]?[name] = .uncertain }
            } else if acknowledged.installation(app.id) == .known(true) {
                violation("setting \(name) of installed \(app.id) refused: \(output.stderr)")
            }
        case .deviceSetting(let name, let value):
            if succeeded {
                acknowledged.deviceSettings[name] = .known(value)
            } else if unknown {
                acknowledged.deviceSettings[name] = .uncertain
            } else {
                violation("device setting \(name) refused: \(output.stderr)")
            }
        case .runRefresh:
            // The request runs and the app resubmits it: it is in flux until observed again.
            acknowledged.pendingRequests.remove("com.crash.refresh/com.example.refresh")
        case .observeTasks:
            if succeeded, let tasks = try? JSONDecoder().decode([ControlInterface.TaskMessage].self, from: Data(output.stdout.utf8)) {
                for task in tasks where task.state == "pending" && task.kind != "fetch" {
                    acknowledged.pendingRequests.insert(task.app + "/" + task.identifier)
                }
            }
        case .open, .home, .lock, .unlock, .forceQuit, .fetch:
            break  // nothing the store must keep that the checks read back; refusals (locked, exits on suspend) are fine
        }
    }

    // MARK: End

    func finishGracefully() {
        do {
            if daemon.process == nil { report.recoveries.append(try daemon.start()) }
            cycle += 1
            try checkAfterRestart()
            // Past every one-shot due time, every acknowledged notification must have fired, once.
            let last = notifications.order.compactMap { notifications.tracked[$0] }.filter { $0.step == nil }
                .map { $0.due ?? $0.aimed }.max() ?? 0
            let wait = last + NotificationChecks.overdueGrace - Date().timeIntervalSince1970
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            try checkNotifications(final: true)
            // Every push stored is finished: handled, held ones released or expired, cut-off ones recorded.
            report.pushes.settleSeconds = try settlePushes(seconds: 20)
            try checkPushes(final: true)
            try checkTransfers(final: true)
            try checkContinued(final: true)
            let pids = try daemon.apps().compactMap(\.pid)
            seenPids.formUnion(pids)
            daemon.stop()
            for pid in pids where CrashInvariants.isAlive(pid) { violation("app pid \(pid) outlived the daemon's graceful stop") }
            let strays = CrashInvariants.processesRunning(under: daemon.state + "/bundles")
            if !strays.isEmpty { violation("processes of installed apps outlived the daemon: \(strays.sorted())") }
        } catch {
            violation("final check: \(error)")
        }
    }

    func cleanUp() {
        // A graceful stop ends the apps and removes the daemon's cgroups, which a kill -9 leaves for re-adoption.
        if daemon.process == nil { _ = try? daemon.start() }
        daemon.stop()
        for pid in clientPids where CrashInvariants.isAlive(pid) { kill(pid, SIGKILL) }
        for pid in seenPids.union(CrashInvariants.processesRunning(under: daemon.state + "/bundles")) where CrashInvariants.isAlive(pid) {
            kill(pid, SIGKILL)
        }
        nginx?.stop()
        try? FileManager.default.removeItem(atPath: daemon.root)
    }
}
