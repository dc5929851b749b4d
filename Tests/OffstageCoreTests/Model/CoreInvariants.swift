import OffstageCore

/// The SPEC's invariants the model-based tests check after every input the core receives, each with the SPEC ids it
/// stands for. Some are read from the core's state after the input, some from the actions it returned, as the shell
/// carries them out in order.
enum Invariant: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// LC-1: at most one app whose process is not being terminated is inactive or active, and it is the device's
    /// foreground app. (An app whose termination is under way is leaving; an exits-on-suspend app stays inactive
    /// while it runs will-terminate, SPEC LC-7.)
    case oneForegroundApp
    /// LC-4: a callback goes only to a process that is attached and not frozen; a process is never frozen with a
    /// callback in flight, and the core never waits for an answer from a frozen process.
    case noCallbackToFrozenApp
    /// LC-2: callbacks reach an app one at a time, in order: a new one is sent only once the app has answered the
    /// previous one — except did-enter-background, which may go right behind will-resign-active — and one sent again
    /// after the callback stream reconnects keeps its id (the SDK drops repeats by id), so no handler runs twice.
    case oneCallbackAtATime
    /// LC-5: an app whose termination begins while it is suspended gets no callback and is not thawed: it is killed.
    case noWillTerminateWhenSuspended
    /// BT-2, BT-4: open background tasks keep a backgrounded app running and share a budget: their expiration handlers
    /// are due by the warning point (each once per budget), and an app with tasks still open at the budget's end is
    /// terminated; a frozen app has no open task and no running scheduled task.
    case backgroundTaskBudget
    /// LC-6: a force-quit app is killed at once and never launched into the background until the user opens it.
    case forceQuitNotLaunched
    /// LC-4: an app in the background with nothing to do (attached, launched, no callback pending, no open task, no
    /// running task, not terminating) is suspended no later than `suspendDelay` after it became so.
    case idleAppSuspended
    /// LC-9: an app whose background launches keep ending abnormally (crash, failed start, killed by a watchdog) is
    /// relaunched into the background with growing delays, never in a tight loop (debug runs excepted).
    case crashLoopThrottled
    /// The core's next deadline is never in the past, and a timer that fires moves it forward (no busy loop).
    case deadlineNotInPast
    /// LC-7: an app with `UIApplicationExitsOnSuspend`, or any app while multitasking is off, is never in state
    /// background or suspended (unless it is being terminated) and is never launched into the background.
    case exitsOnSuspend
    /// MAN-3, LC-3: callbacks and signals go only to the app's own current process (never to a pid that has exited,
    /// which the system may reuse); nothing is launched for an app being uninstalled or not installed, nor while its
    /// previous process lives; an app is forgotten only once its process is gone.
    case ownProcessOnly
    /// Reliability (SPEC §11, misbehaving apps are contained): every process the shell started and has not seen exit
    /// is the current process of its app in the core; a process the core lost track of could never be suspended or
    /// killed again.
    case noLostProcess
    /// §11 scale: the scheduler's kept per-app views are what a look at every app from scratch would find, so
    /// deciding incrementally (only the apps that changed) decides as deciding over every app would.
    case schedulerViewsCurrent
    /// §11 scale: the earliest deadline the core keeps for each app's process is the one the process has, so the
    /// next deadline found among the apps that have one is the one a look at every app would find.
    case deadlinesCurrent
    /// MODE-4, MODE-6: the shell watches exactly the accessories the installed apps registered (as their durable
    /// state keeps them), at their paths, each in a mode its app's manifest declares; an app is launched for an
    /// accessory only if it has such a registration.
    case accessoriesDeclared
    /// NT-2: each firing of a request (its delivery key: app, identifier, due time) happens at most once, and only of
    /// the request pending with that due time.
    case notificationFiredOnce
    /// NT-2, SCH-10: what the daemon's store would hold, built from the notification actions alone (pending rows,
    /// delivery records, badges, categories), is the core's notification state after every input: a restart loses
    /// nothing and brings nothing back.
    case notificationsStored
    /// NT-2, §11: no pending notification is overdue, and the core's next deadline is no later than the next due one,
    /// so the shell's one timer fires each at its time.
    case notificationDeadline
    /// NT-4: every push that arrived is, at every moment, exactly one of running in a handler, held, or finished
    /// with one outcome (never lost without a record, never finished twice), and the store built from the push
    /// actions and the handed callbacks says the same as the core.
    case pushAccountedFor
    /// NT-4, NT-5: at most one push is held per app, the newest (an older one is finished as coalesced into a newer
    /// push of the app); a push with expiration 0 is never held; a push stays held only while its app's budget is
    /// spent and it has not expired.
    case pushHeld
    /// NT-4, NT-5, LC-6, MAN-3: a handler starts only for an installed app the user has not force-quit, before the
    /// push's expiration; the app gets each push at most once, across restarts too; an app active in front is not
    /// made to wait for its budget.
    case pushDeliveredByTheRules
    /// NT-4: a remote-notification handler has its 30 s; past them the app is being terminated and the run is gone
    /// within the termination grace; an app is not suspended while a handler runs.
    case pushHandlerDeadline
    /// NT-4: the wakes that spend an app's budget fit the bucket: in any window, at most burst + rate × window.
    case pushBudget
    /// TR-6: the journal built from the transfer actions alone is the core's transfer queue after every input; a task
    /// is journaled running before its attempt starts and completed before its file is handed over, once.
    case transfersJournaled
    /// TR-4, TR-5, SET-2, TR-2: running transfers fit the limits (all, and per app), none runs while its conditions,
    /// settings or the app's force-quit hold it back, and what the core has running is exactly what the engine runs.
    case transfersWithinLimits
    /// TR-2, TR-3: every finished task waits for its app until the app handles its event, once; a force-quit app has
    /// nothing unfinished; launches for transfer events go only to installed apps not force-quit, spaced by the
    /// doubling relaunch delay until the user opens the app.
    case transferEventsByTheRules
    /// SCH-11: continued-processing tasks are submitted in the foreground, run within the slots (fewer under
    /// pressure), end least progress first under pressure, expire when silent for the progress timeout, and leave the
    /// queue in submission order.
    case continuedSlots
    /// SET-2: the rules the shell holds, built from the network actions alone, block exactly the installed apps the
    /// user's settings restrict now (background activity off; on a metered network background data off, or Data Saver
    /// without unrestricted data), never an app in front or one playing audio the user started.
    case networkRulesCurrent
    /// SET-3: the usage contexts the shell holds, built from the usage actions alone, are those of the apps with a
    /// process, each as the app is now (in front, running in the background, metered), a running one on today.
    case usageContextsCurrent
    /// MEM-1, SET-2: the order apps would be ended in holds every app with a process once, in the band its state
    /// gives (in front, frozen, playing the user's audio), the apps kept in memory after the other apps out of front,
    /// the app in front last, and within a band the least recently used first.
    case memoryOrder
    case memoryResponse

    var description: String {
        switch self {
        case .oneForegroundApp: "LC-1 at most one foreground app"
        case .noCallbackToFrozenApp: "LC-4 no callback to a frozen app"
        case .oneCallbackAtATime: "LC-2 one callback at a time (a leaving pair back to back), a repeat keeps its id"
        case .noWillTerminateWhenSuspended: "LC-5 a suspended app never gets will-terminate"
        case .backgroundTaskBudget: "BT-2/BT-4 background tasks end, expire or kill the app by its budget"
        case .forceQuitNotLaunched: "LC-6 a force-quit app is never launched in the background"
        case .idleAppSuspended: "LC-4 no idle app in the background past suspendDelay"
        case .crashLoopThrottled: "LC-9 crash loops are throttled with growing delays"
        case .deadlineNotInPast: "the next deadline is never in the past"
        case .exitsOnSuspend: "LC-7 exits-on-suspend and multitasking off: never background, never launched into it"
        case .ownProcessOnly: "MAN-3/LC-3 actions go only to the app's own live process"
        case .noLostProcess: "§11 the core never loses track of a live process"
        case .schedulerViewsCurrent: "§11 the incremental scheduler sees what a full look would"
        case .deadlinesCurrent: "§11 the kept process deadlines are what a full look would find"
        case .accessoriesDeclared: "MODE-4/MODE-6 accessories are watched as registered, only in declared modes"
        case .notificationFiredOnce: "NT-2 each notification firing happens once, of the pending request"
        case .notificationsStored: "NT-2 the store built from the actions is the core's notification state"
        case .notificationDeadline: "NT-2 nothing overdue; the next deadline is no later than the next due notification"
        case .pushAccountedFor: "NT-4 every push is running, held or finished, exactly one, as the store says"
        case .pushHeld: "NT-4/NT-5 one held push per app, the newest, never one of expiration 0, only while over budget"
        case .pushDeliveredByTheRules: "NT-4/NT-5 pushes handed once, never expired, force-quit or uninstalled"
        case .pushHandlerDeadline: "NT-4 a remote-notification handler ends by its deadline"
        case .pushBudget: "NT-4 background wakes stay within the budget"
        case .transfersJournaled: "TR-6 the journal built from the actions is the core's transfer queue"
        case .transfersWithinLimits: "TR-4/TR-5/SET-2 running transfers fit the limits and their conditions, as the engine runs them"
        case .transferEventsByTheRules: "TR-2/TR-3 finished transfers reach their app once; launches for them are spaced"
        case .continuedSlots: "SCH-11 continued tasks within the slots, least progress ended first, in submission order"
        case .networkRulesCurrent: "SET-2 the shell blocks exactly the traffic the settings restrict now"
        case .usageContextsCurrent: "SET-3 the shell counts each app's use as what the app is doing now"
        case .memoryOrder: "MEM-1 apps are ended by band, kept ones after the rest, the app in front last, least recently used first"
        case .memoryResponse: "MEM-1 apps are ended for memory only while it is short, one per interval at most"
        }
    }
}

/// A broken invariant: which, what was seen, and when.
struct Violation: Hashable, Sendable, CustomStringConvertible {
    /// The invariant.
    var invariant: Invariant
    /// What was seen, naming the app and the numbers.
    var message: String
    /// The index of the command during which it was seen.
    var step: Int
    /// Virtual time, in seconds since the model's start.
    var seconds: Double

    var description: String {
        "[\(invariant)] at command \(step), t=\(formatSeconds(seconds)): \(message)"
    }
}

/// What the invariants read after one input: the core's state and the shell's view of the processes it started.
/// A plain value, so a test can also hand the checker a state made bad on purpose.
struct ModelObservation {
    /// The instant of the input.
    var now: Instant
    /// The core's apps.
    var apps: [AppID: AppEntry]
    /// The core's device state.
    var device: DeviceState
    /// The core's configuration.
    var configuration: CoreConfiguration
    /// The core's next deadline.
    var nextDeadline: Instant?
    /// The shell's processes that have not been reported as exited, by pid.
    var processes: [Int32: ModelProcess]
    /// Launches the core asked for that the shell has not started yet.
    var pendingLaunches: [PendingLaunch]
    /// Since when each process has been idle in the background, by pid.
    var idleSince: [Int32: Instant]
    /// Background launches in a row that ended abnormally, per app.
    var crashes: [AppID: CrashStreak]
    /// The input is a debug verb, which runs work whatever holds it back.
    var forcing: Bool
    /// Whether the input was a timer firing.
    var firedTimer: Bool
    /// Apps whose kept scheduling view differs from one computed from scratch (``OffstageCore/schedulingViewsOutOfDate(at:)``).
    var staleSchedulingViews: [AppID] = []
    /// Apps whose kept earliest deadline differs from their process's (``OffstageCore/processDeadlinesOutOfDate()``).
    var staleDeadlines: [AppID] = []
    /// The accessories the shell watches, with their paths.
    var accessoryWatches: [AccessoryKey: String] = [:]
    /// The core's notifications.
    var notifications = NotificationSchedule()
    /// What the daemon's store would hold, from the notification actions so far.
    var notificationStore = NotificationStoreModel()
    /// The delivery keys fired so far.
    var firedNotifications: Set<DeliveryKey> = []
    /// The core's push inbox: held pushes and budgets.
    var pushInbox = PushInbox()
    /// The core's push budget numbers.
    var pushLimits = PushBudget.Limits(perHour: 3, burst: 3)
    /// What the daemon's store would hold of the pushes, and the runs and wakes the shell saw.
    var pushStore = ModelPushes()
    /// The apps whose traffic the shell blocks, from the network actions so far, and why.
    var networkRules: [AppID: NetworkRestriction] = [:]
    /// Each app's usage context, from the usage actions so far.
    var usageContexts: [AppID: UsageContext] = [:]
    /// The apps playing audio the user started.
    var userAudio: Set<AppID> = []
    /// The core's order of ending apps when memory stays short.
    var memoryOrder: [MemoryStanding] = []
}

/// The checks themselves. Each returns what it found broken; the shell keeps the first enabled one.
enum CoreInvariants {
    /// Every invariant readable from the state after an input.
    static func check(_ seen: ModelObservation) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        func fail(_ invariant: Invariant, _ message: String) { found.append((invariant, message)) }
        let now = seen.now
        let ids = seen.apps.keys.sorted()

        // LC-1
        let front = ids.filter { id in
            guard let process = seen.apps[id]?.process else { return false }
            return process.termination == nil && process.phase.isForeground
        }
        if front.count > 1 {
            fail(.oneForegroundApp, "\(front.map(\.description).joined(separator: " and ")) are all in the foreground")
        } else if let only = front.first, seen.device.foregroundApp != only {
            let phase = seen.apps[only]?.state.rawValue ?? "?"
            fail(
                .oneForegroundApp,
                "\(only) is \(phase) but the device's foreground app is "
                    + (seen.device.foregroundApp.map(\.description) ?? "none")
            )
        }

        for id in ids {
            guard let entry = seen.apps[id] else { continue }
            let exits = entry.app.manifest.exitsOnSuspend || !seen.device.settings.multitaskingSupported
            // LC-6
            if entry.durable.forceQuit, let process = entry.process, process.termination?.stage != .killed {
                fail(
                    .forceQuitNotLaunched,
                    "\(id) is force-quit yet its process runs (\(process.phase.rawValue), not killed)")
            }
            guard let process = entry.process else { continue }
            let live = process.termination == nil
            // LC-4: nothing in flight to a frozen process
            if process.frozen, let inFlight = process.inFlight {
                fail(.noCallbackToFrozenApp, "\(id) is frozen with \(inFlight.kind) in flight")
            }
            // LC-7
            if exits, live, process.phase == .background || process.phase == .suspended {
                let why = entry.app.manifest.exitsOnSuspend ? "exits on suspend" : "multitasking is off"
                fail(.exitsOnSuspend, "\(id) is \(process.phase.rawValue) although \(why)")
            }
            // BT-2, BT-4
            if live, process.frozen, process.ledger.hasOpenTasks || !process.runs.isEmpty {
                fail(
                    .backgroundTaskBudget,
                    "\(id) is frozen with \(process.ledger.tasks.count) open task(s) and \(process.runs.count) run(s)")
            }
            if live, process.phase == .background, process.ledger.hasOpenTasks {
                let tasks = process.ledger.tasks.map(\.id.description).joined(separator: ", ")
                if let end = process.ledger.budgetEnd {
                    let budget = seen.configuration.backgroundTaskBudget
                    let warning = end - .seconds(double: seen.configuration.expirationWarning)
                    if (end - now).inSeconds > budget + 1e-9 {
                        fail(
                            .backgroundTaskBudget,
                            "\(id)'s budget ends \(formatSeconds((end - now).inSeconds)) s from now, "
                                + "more than \(budget) s"
                        )
                    }
                    if now >= end {
                        fail(
                            .backgroundTaskBudget,
                            "\(id) still runs task \(tasks) \(formatSeconds((now - end).inSeconds)) s "
                                + "after its budget ended"
                        )
                    } else if now >= warning, process.ledger.tasks.contains(where: { !$0.expirationSent }) {
                        fail(
                            .backgroundTaskBudget,
                            "\(id)'s expiration handlers are not due "
                                + "\(formatSeconds((now - warning).inSeconds)) s after the warning point"
                        )
                    }
                } else {
                    fail(.backgroundTaskBudget, "\(id) is in the background with task \(tasks) open and no budget")
                }
            }
        }

        // LC-4: idle too long without being suspended
        for (pid, since) in seen.idleSince.sorted(by: { $0.key < $1.key }) {
            let limit = since + .seconds(double: seen.configuration.suspendDelay)
            if now >= limit, let process = seen.processes[pid] {
                fail(
                    .idleAppSuspended,
                    "\(process.app) (pid \(pid)) has been idle in the background since "
                        + "t=\(formatSeconds((since - ModelWorld.start).inSeconds)) "
                        + "and is still not suspended \(formatSeconds((now - since).inSeconds)) s later")
            }
        }

        // MODE-4, MODE-6: what is watched is what is registered (and saved), in declared modes only.
        var registered: [AccessoryKey: String] = [:]
        for id in ids {
            guard let entry = seen.apps[id] else { continue }
            for registration in entry.durable.accessories {
                registered[AccessoryKey(app: id, name: registration.name)] = registration.path
                if !entry.app.manifest.backgroundModes.contains(registration.mode) {
                    fail(
                        .accessoriesDeclared,
                        "\(id) keeps accessory '\(registration.name)' in '\(registration.mode.rawValue)', which its "
                            + "manifest does not declare")
                }
            }
        }
        for key in Set(registered.keys).union(seen.accessoryWatches.keys).sorted()
        where registered[key] != seen.accessoryWatches[key] {
            fail(
                .accessoriesDeclared,
                "\(key) is registered at \(registered[key] ?? "nothing") but watched at "
                    + (seen.accessoryWatches[key] ?? "nothing"))
        }

        // The incremental scheduler
        if !seen.staleSchedulingViews.isEmpty {
            fail(
                .schedulerViewsCurrent,
                "the scheduler's views of \(seen.staleSchedulingViews.map(\.description).joined(separator: ", ")) are out "
                    + "of date, yet nothing marks them as changed")
        }

        if !seen.staleDeadlines.isEmpty {
            fail(
                .deadlinesCurrent,
                "the kept deadlines of \(seen.staleDeadlines.map(\.description).joined(separator: ", ")) are out of "
                    + "date, yet nothing marks them as changed")
        }

        // Deadlines
        if let next = seen.nextDeadline {
            if next < now {
                fail(.deadlineNotInPast, "the next deadline is \(formatSeconds((now - next).inSeconds)) s in the past")
            } else if seen.firedTimer, next == now {
                fail(.deadlineNotInPast, "a timer fired and the next deadline is still now: the shell would spin")
            }
        }

        // NT-2: the store and the core agree; nothing is overdue; the timer is armed for the next one.
        for difference in seen.notificationStore.differences(from: seen.notifications) {
            fail(.notificationsStored, difference)
        }
        let rows = seen.notifications.pending.values.flatMap(\.values)
        if let overdue = rows.min(by: { $0.due < $1.due }), overdue.due < now {
            fail(
                .notificationDeadline,
                "'\(overdue.identifier)' was due \(formatSeconds((now - overdue.due).inSeconds)) s ago and has not "
                    + "fired")
        }
        if let soonest = ([seen.notifications.nextDue].compactMap { $0 } + rows.map(\.due)).min(),
            seen.nextDeadline.map({ $0 > soonest }) ?? true
        {
            let deadline = seen.nextDeadline.map { "\(formatSeconds(($0 - now).inSeconds)) s from now" } ?? "none"
            fail(
                .notificationDeadline,
                "a notification is due \(formatSeconds((soonest - now).inSeconds)) s from now, the next deadline is "
                    + deadline)
        }

        // Every process the shell knows is the core's current process of its app.
        for (pid, process) in seen.processes.sorted(by: { $0.key < $1.key }) {
            let current = seen.apps[process.app]?.process?.pid
            if current != pid {
                let what = process.death == nil ? "alive" : "dead, exit not yet reported"
                fail(
                    .noLostProcess,
                    "pid \(pid) of \(process.app) is \(what) but the core's process for the app is "
                        + "\(current.map { "pid \($0)" } ?? "none")")
            }
        }
        for pending in seen.pendingLaunches {
            let process = seen.apps[pending.app]?.process
            if process?.launch != pending.launch || process?.pid != nil {
                fail(.noLostProcess, "the core forgot launch #\(pending.launch) of \(pending.app) before it started")
            }
        }
        found += checkPushes(seen)
        found += checkNetworkRules(seen)
        found += checkUsageContexts(seen)
        found += checkMemoryOrder(seen)
        return found
    }

    /// MEM-1, derived here from the state, not from the core's own rule (but for what makes work "for the user").
    static func checkMemoryOrder(_ seen: ModelObservation) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        func fail(_ message: String) { found.append((.memoryOrder, message)) }
        let order = seen.memoryOrder
        let running = Set(seen.apps.compactMap { $0.value.process == nil ? nil : $0.key })
        if Set(order.map(\.app)) != running || order.count != running.count {
            fail("the order holds \(order.map(\.app)), but the apps with a process are \(running.sorted())")
        }
        for standing in order {
            guard let entry = seen.apps[standing.app], let process = entry.process else { continue }
            let expected: MemoryBand? =
                process.phase.isForeground ? .foreground
                : process.frozen || process.phase == .suspended ? .suspended
                : seen.userAudio.contains(standing.app) ? .backgroundUser : nil
            if let expected, standing.band != expected {
                fail("\(standing.app) is \(process.phase)\(process.frozen ? " (frozen)" : ""), yet its band is \(standing.band.rawValue)")
            }
            if expected == nil, standing.band == .foreground || standing.band == .suspended {
                fail("\(standing.app) runs in the background, yet its band is \(standing.band.rawValue)")
            }
            if standing.keptInMemory != entry.app.settings.keptInMemory {
                fail("\(standing.app)'s kept-in-memory setting is \(entry.app.settings.keptInMemory), its standing says \(standing.keptInMemory)")
            }
        }
        func group(_ standing: MemoryStanding) -> Int { standing.band == .foreground ? 2 : standing.keptInMemory ? 1 : 0 }
        for (earlier, later) in zip(order, order.dropFirst()) {
            let (first, second) = (group(earlier), group(later))
            if first > second || (first == second && earlier.band > later.band)
                || (first == second && earlier.band == later.band && earlier.lastUsed > later.lastUsed)
            {
                fail("\(earlier.app) (\(earlier.band.rawValue)) is ended before \(later.app) (\(later.band.rawValue))")
            }
        }
        return found
    }

    /// SET-3, derived here from the state, not from the core's own rule.
    static func checkUsageContexts(_ seen: ModelObservation) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        let metered = (seen.device.overrides.network ?? seen.device.machine.network ?? .unmetered) == .metered
        let today = LocalClock(utcOffsetSeconds: seen.configuration.utcOffsetSeconds ?? 0).day(seen.now)
        for id in Set(seen.apps.keys).union(seen.usageContexts.keys).sorted() {
            let context = seen.usageContexts[id]
            guard let process = seen.apps[id]?.process else {
                if context != nil { found.append((.usageContextsCurrent, "\(id) has no process, yet its use is still counted")) }
                continue
            }
            guard let context else {
                found.append((.usageContextsCurrent, "\(id) has a process (\(process.phase)) whose use is not counted"))
                continue
            }
            let foreground = process.phase.isForeground
            let running = process.phase == .background && !process.frozen
            if context.foreground != foreground || context.backgroundRunning != running || context.metered != metered {
                found.append((
                    .usageContextsCurrent,
                    "\(id) is \(process.phase)\(process.frozen ? " (frozen)" : "") on a \(metered ? "metered" : "unmetered") network, "
                        + "but its use counts as foreground \(context.foreground), running in the background "
                        + "\(context.backgroundRunning), metered \(context.metered)"))
            }
            if context.running && context.day != today {
                found.append((.usageContextsCurrent, "\(id) runs on day \(today), but its use counts for day \(context.day)"))
            }
        }
        return found
    }

    /// SET-2, derived here from the settings and the state, not from the core's own rule.
    static func checkNetworkRules(_ seen: ModelObservation) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        let network = seen.device.overrides.network ?? seen.device.machine.network ?? .unmetered
        for id in Set(seen.apps.keys).union(seen.networkRules.keys).sorted() {
            let have = seen.networkRules[id]
            guard let entry = seen.apps[id] else {
                if let have {
                    found.append((.networkRulesCurrent, "\(id) is not installed, yet its traffic is blocked (\(have.rawValue))"))
                }
                continue
            }
            let settings = entry.app.settings
            let exempt = entry.process?.phase.isForeground == true || seen.userAudio.contains(id)
            let want: NetworkRestriction? =
                if exempt { nil }
                else if !settings.backgroundActivity { .backgroundActivityOff }
                else if network != .metered { nil }
                else if !settings.backgroundData { .backgroundDataOff }
                else if seen.device.settings.dataSaver && !settings.unrestrictedData { .dataSaver }
                else { nil }
            if have != want {
                let state = entry.process.map { $0.phase.rawValue } ?? "not running"
                found.append((
                    .networkRulesCurrent,
                    "\(id) (\(state), \(network) network) should be \(want?.rawValue ?? "allowed") but the shell has it "
                        + (have?.rawValue ?? "allowed")))
            }
        }
        return found
    }

    /// The checks of one action, against the shell's processes as they are just before the shell carries it out.
    static func check(
        _ action: CoreAction, _ seen: ModelObservation, processes: [Int32: ModelProcess], exitedPids: Set<Int32>
    ) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        func fail(_ invariant: Invariant, _ message: String) { found.append((invariant, message)) }
        func ownProcess(_ id: AppID, _ pid: Int32, _ what: String) -> ModelProcess? {
            guard let process = processes[pid], process.app == id else {
                let owner =
                    processes[pid].map { "belongs to \($0.app)" }
                    ?? (exitedPids.contains(pid) ? "has exited" : "was never started")
                fail(.ownProcessOnly, "\(what) to pid \(pid) of \(id), which \(owner)")
                return nil
            }
            return process
        }
        switch action {
        case .launch(let id, let plan):
            let entry = seen.apps[id]
            if entry == nil || entry?.uninstalling == true {
                fail(
                    .ownProcessOnly, "launch of \(id), which is \(entry == nil ? "not installed" : "being uninstalled")"
                )
            }
            if let old = processes.values.first(where: { $0.app == id }) {
                fail(.ownProcessOnly, "second launch of \(id) while pid \(old.pid) has not been seen to exit")
            }
            if !plan.reason.isForeground, !seen.forcing, let streak = seen.crashes[id], streak.count > 0 {
                let delay = streak.delay(seen.configuration)
                let waited = (seen.now - streak.lastEnd).inSeconds
                if waited < delay - 1e-9 {
                    fail(
                        .crashLoopThrottled,
                        "\(id) relaunched into the background (\(plan.reason.rawValue)) "
                            + "\(formatSeconds(waited)) s after the last of \(streak.count) abnormal end(s) in a row; "
                            + "the delay is \(formatSeconds(delay)) s")
                }
            }
            if plan.reason == .accessory, let entry, !entry.durable.accessories.contains(where: {
                entry.app.manifest.backgroundModes.contains($0.mode)
            }) {
                fail(.accessoriesDeclared, "\(id) is launched for an accessory, but has none in a mode it declares")
            }
            if !plan.reason.isForeground, let entry {
                if entry.durable.forceQuit {
                    fail(
                        .forceQuitNotLaunched,
                        "\(id) is force-quit and launched into the background (\(plan.reason.rawValue))")
                }
                if entry.app.manifest.exitsOnSuspend || !seen.device.settings.multitaskingSupported {
                    let why = entry.app.manifest.exitsOnSuspend ? "exits on suspend" : "multitasking is off"
                    fail(
                        .exitsOnSuspend,
                        "\(id) is launched into the background (\(plan.reason.rawValue)) although \(why)")
                }
            }
        case .deliver(let id, let pid, let callback):
            guard let process = ownProcess(id, pid, "\(callback.kind)") else { break }
            if process.death == nil {
                if process.frozen { fail(.noCallbackToFrozenApp, "\(callback.kind) delivered to \(id) while frozen") }
                if !process.attached {
                    fail(.noCallbackToFrozenApp, "\(callback.kind) delivered to \(id) while not attached")
                }
            }
            // A repeat after a reconnect keeps its id; the second of a leaving pair goes out right behind the first.
            let repeated = process.outstanding.contains { $0.id == callback.id }
            let behindItsPair = process.outstanding.count == 1
                && process.outstanding[0].kind == .willResignActive && callback.kind == .didEnterBackground
            if let previous = process.outstanding.first, !repeated, !behindItsPair {
                fail(
                    .oneCallbackAtATime,
                    "\(callback.kind) #\(callback.id) sent to \(id) while its handler for "
                        + "\(previous.kind) #\(previous.id) "
                        + "has not returned")
            }
            if case .notificationWillPresent(let record) = callback.kind,
                seen.notificationStore.delivered[record.key] == nil
            {
                fail(.notificationsStored, "\(record.key) handed to \(id) before its delivery record was stored")
            }
            if case .willTerminate = callback.kind, process.terminatedWhileSuspended {
                fail(.noWillTerminateWhenSuspended, "will-terminate delivered to \(id), terminated while suspended")
            }
            // The same callback sent again after a reconnect (same id) is not a second call: the SDK drops it.
            if case .backgroundTasksExpiring(let tasks) = callback.kind, !process.received.contains(callback.id),
                let end = seen.apps[id]?.process?.ledger.budgetEnd
            {
                for task in tasks where process.expirationsDelivered.contains(ExpirationKey(task: task, budgetEnd: end))
                {
                    fail(
                        .backgroundTaskBudget, "expiration handler of task \(task) of \(id) called twice in one budget")
                }
            }
        case .freeze(let id, let pid):
            guard let process = ownProcess(id, pid, "freeze") else { break }
            if process.frozen { fail(.noCallbackToFrozenApp, "\(id) frozen twice") }
            if process.death == nil, let callback = process.outstanding.first {
                fail(.noCallbackToFrozenApp, "\(id) frozen while its handler for \(callback.kind) has not returned")
            }
            if process.death == nil, !process.openTasks.isEmpty || !process.runs.isEmpty {
                fail(
                    .backgroundTaskBudget,
                    "\(id) frozen with \(process.openTasks.count) open task(s) and "
                        + "\(process.runs.count) run(s) in its hands"
                )
            }
        case .thaw(let id, let pid):
            guard let process = ownProcess(id, pid, "thaw") else { break }
            if process.terminatedWhileSuspended {
                fail(.noWillTerminateWhenSuspended, "\(id) thawed after its termination began while suspended")
            }
        case .terminate(let id, let pid):
            _ = ownProcess(id, pid, "SIGTERM")
        case .kill(let id, let pid):
            _ = ownProcess(id, pid, "SIGKILL")
        case .forget(let id, _):
            if let process = processes.values.first(where: { $0.app == id }) {
                fail(.ownProcessOnly, "\(id) forgotten while pid \(process.pid) has not been seen to exit")
            }
        case .watchSocket(let id, _, true):
            // Watched only for a suspended app (closing one may come with an uninstall, once the app is gone).
            if seen.apps[id]?.process?.frozen != true {
                fail(.ownProcessOnly, "the socket of \(id) is watched though \(id) is not suspended")
            }
        case .watchSocket, .closeSocket, .watchAccessory, .unwatchAccessory, .push, .transfer:
            break
        case .notification(let notification):
            var isFiring = false
            var pushAlert = false
            if case .fire(let key, _, _) = notification {
                isFiring = true
                pushAlert = seen.pushStore.isAlert(key)
                if seen.firedNotifications.contains(key) { fail(.notificationFiredOnce, "\(key) fired a second time") }
            }
            // Persist first, then act: what is shown is stored as the user's, so a restart after a crash between the
            // two shows it then.
            if case .show(let record) = notification, seen.notificationStore.delivered[record.key]?.route != .user {
                fail(.notificationsStored, "\(record.key) shown before it was stored as the user's")
            }
            // A firing the store cannot take (of no pending row, or with another due time) is a firing nobody asked
            // for or a second one; any other action it cannot take leaves the store wrong.
            var store = seen.notificationStore
            for problem in store.apply(notification, pushAlert: pushAlert) {
                fail(isFiring ? .notificationFiredOnce : .notificationsStored, problem)
            }
        case .log, .saveApp, .saveDevice, .continuedProgress, .recordHistory, .network, .usage:
            break
        }
        found += checkPush(action, seen)
        return found
    }
}

/// One expiration-handler call: a task and the budget it was called for.
struct ExpirationKey: Hashable, Sendable {
    /// The task.
    var task: BackgroundTaskID
    /// The end of the budget it was called for.
    var budgetEnd: Instant
}

/// Seconds with millisecond precision, for messages.
func formatSeconds(_ seconds: Double) -> String {
    let milliseconds = Int64((seconds * 1000).rounded())
    let magnitude = milliseconds.magnitude
    let fraction = String(magnitude % 1000)
    let sign = milliseconds < 0 ? "-" : ""
    return sign + String(magnitude / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
}
