import OffstageCore
import PropertyBased

/// How often the generator picks each kind of command; a test that aims at one part of the SPEC leans on it.
struct GeneratorProfile: Sendable {
    /// Weights of the manifests apps are installed with.
    var variants: [(Double, ManifestVariant)]
    /// Weight of turning multitasking off (turning it back on has weight 1).
    var multitaskingOff: Double
    /// Fewest and most commands in a sequence.
    var length: ClosedRange<Int>
    /// How much the accessory commands weigh (SPEC MODE-4), against the lifecycle's mix; with 0 there are none, and
    /// the sequences of a seed are those of before accessories existed.
    var accessories: Double = 0
    /// How much the notification commands weigh (SPEC NT-1, NT-2); with 0 there are none, and the sequences of a seed
    /// are those of before notifications existed.
    var notifications: Double = 0
    /// How much the push commands weigh (SPEC NT-4, NT-5); with 0 there are none, and the sequences of a seed are
    /// those of before pushes existed.
    var pushes: Double = 0
    /// How much the transfer and continued-processing commands weigh (SPEC TR-1..6, SCH-11); with 0 there are none,
    /// and the sequences of a seed are those of before transfers existed.
    var transfers: Double = 0
    /// How much the memory commands weigh (SPEC MEM-1): levels set by hand, readings of the machine, warnings by hand;
    /// with 0 there are none, and the sequences of a seed are those of before the memory response existed.
    var memory: Double = 0

    /// Every part of the core, the device mostly multitasking.
    static let lifecycle = GeneratorProfile(
        variants: [(3, .scheduler), (2, .plain), (2, .fetchOnly), (1, .exitsOnSuspend), (1, .modes)], multitaskingOff: 0.4,
        length: 40...160)

    /// Apps in the long-running modes, accessory apps most of all (SPEC §7, MODE-4): their accessories come and go,
    /// and they end and are launched again for them.
    static let modes = GeneratorProfile(
        variants: [(3, .modes), (3, .accessory), (1, .scheduler), (1, .plain)], multitaskingOff: 0.2, length: 40...160,
        accessories: 3)

    /// Apps adding, removing and answering notifications while the user opens, leaves, locks and taps, time zones
    /// change and time passes (SPEC NT-1, NT-2); exits-on-suspend and mode apps among them, for the launches a tap
    /// causes.
    static let notifications = GeneratorProfile(
        variants: [(3, .plain), (2, .scheduler), (1, .exitsOnSuspend), (1, .modes)], multitaskingOff: 0.3,
        length: 40...160, notifications: 3)

    /// Pushes arriving for apps that declare `remote-notification` (most of them) and for others, alone and in
    /// bursts that spend the budget, while the apps run, hang or crash in their handlers, the user opens and
    /// force-quits them, and the daemon restarts (SPEC NT-4, NT-5); a few notification commands for the alerts.
    static let pushes = GeneratorProfile(
        variants: [(4, .messenger), (2, .plain), (1, .scheduler), (1, .exitsOnSuspend), (1, .modes)],
        multitaskingOff: 0.2, length: 40...160, notifications: 0.3, pushes: 3)

    /// Apps downloading in the background while the engine's attempts succeed, fail and are cut, conditions and
    /// settings change, the user opens, leaves and force-quits, apps crash and the daemon restarts (SPEC TR-1..6);
    /// with continued-processing tasks the user starts in front, reports of their progress, cancels and pressure
    /// (SCH-11).
    static let transfers = GeneratorProfile(
        variants: [(4, .downloader), (1, .plain), (1, .scheduler), (1, .exitsOnSuspend), (1, .modes)],
        multitaskingOff: 0.2, length: 40...160, transfers: 3)

    /// Memory getting short and relieved while the apps run, play, hold tasks and are suspended, some kept in memory
    /// (SPEC MEM-1, SET-2): the machine's readings, levels set by hand, warnings by hand, with the lifecycle's mix.
    static let memory = GeneratorProfile(
        variants: [(3, .scheduler), (2, .plain), (2, .modes), (1, .fetchOnly), (1, .messenger)], multitaskingOff: 0.2,
        length: 40...160, memory: 2)

    /// Exits-on-suspend apps and multitasking switched off and on (SPEC LC-7).
    static let multitaskingOff = GeneratorProfile(
        variants: [(3, .exitsOnSuspend), (3, .scheduler), (1, .fetchOnly), (1, .plain)], multitaskingOff: 3,
        length: 30...120)
}

/// Generates command sequences from a seed, looking at the shell as it goes so that most commands mean something:
/// a reply where a callback is outstanding, an attach where a process has started, a spawn where a launch is pending.
/// Replaying the commands it produced needs no generator: a sequence is the whole test case.
///
/// The random numbers come from PropertyBased's `Xoshiro` (xoshiro256**), seeded from one 64-bit number, so a seed
/// printed by a failure reproduces the same sequence on any machine.
struct CommandGenerator {
    private var rng: Xoshiro
    private let profile: GeneratorProfile
    /// How likely the apps of this sequence are to do what is awaited of them (start, attach, answer) before anything
    /// else happens: well-behaved apps in most sequences, hung and slow ones in some.
    private let promptness: Double
    /// Pushes still to come in the burst under way, and for which slot.
    private var burst: (slot: Int, left: Int)?

    /// A generator for one sequence.
    init(seed: UInt64, profile: GeneratorProfile) {
        // SplitMix64 spreads one number over xoshiro's four words, as its authors recommend.
        var state = seed
        func splitMix() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        rng = Xoshiro(seed: (splitMix(), splitMix(), splitMix(), splitMix()))
        self.profile = profile
        promptness = [0.3, 0.7, 0.85, 0.95][Int.random(in: 0...3, using: &rng)]
    }

    /// How many commands the sequence has.
    mutating func length() -> Int { Int.random(in: profile.length, using: &rng) }

    /// The next command, given what the shell looks like now. The first commands install every slot.
    mutating func next(_ shell: ModelShell, index: Int) -> ModelCommand {
        if index < ModelWorld.appCount { return .install(index, weighted(profile.variants)) }
        var options: [(Double, Choice)] = []
        // What the processes are waiting for, weighted up so that sessions get somewhere.
        for slot in 0..<ModelWorld.appCount {
            let id = ModelWorld.app(slot)
            if shell.pendingLaunches.contains(where: { $0.app == id }) { options.append((30, .spawn(slot))) }
            guard let process = shell.process(of: slot) else { continue }
            if process.death != nil { options.append((4, .reap(slot))) }
            guard process.death == nil, !process.frozen else { continue }
            if !process.attached { options.append((20, .attach(slot))) }
            if process.attached, let callback = process.outstanding.first {
                options.append((30, .reply(slot)))
                options.append((4, .beginTask(slot)))
                switch callback.kind {
                // A continued-processing task's work goes on long after its handler returns (an export): it is
                // completed seldom, so that tasks run side by side and meet pressure.
                case .runTask(_, _, .continued, _): options.append((1, .complete(slot)))
                case .runTask, .performFetch, .taskExpiring: options.append((8, .complete(slot)))
                case .backgroundTasksExpiring: options.append((8, .endTask(slot)))
                case .notificationWillPresent where profile.notifications > 0:
                    options.append((20, .answerWillPresent(slot)))
                default: break
                }
            }
            if !process.openTasks.isEmpty { options.append((3, .endTask(slot))) }
            if !process.runs.isEmpty { options.append((3, .complete(slot))) }
            if profile.pushes > 0, !process.pushRuns.isEmpty { options.append((12, .completePush(slot))) }
            if profile.transfers > 0, !process.transferRuns.isEmpty { options.append((10, .completeTransferEvents(slot))) }
        }
        let awaited = options
        if !awaited.isEmpty, Double.random(in: 0..<1, using: &rng) < promptness { return make(weighted(awaited)) }
        // A burst of pushes for one app goes on, now and then letting something else happen in between.
        if let current = burst, int(0...4) != 0 {
            burst = current.left > 1 ? (current.slot, current.left - 1) : nil
            return .push(current.slot, pushArguments())
        }
        // App-side commands mostly go to an app whose process can act.
        let actors = shell.processes.values.filter { $0.death == nil && !$0.frozen }.compactMap {
            ModelWorld.slot(of: $0.app)
        }.sorted()
        let busy = !actors.isEmpty
        let appSlot = { (rng: inout Xoshiro) -> Int in
            actors.isEmpty || Int.random(in: 0...3, using: &rng) == 0
                ? Int.random(in: 0..<ModelWorld.appCount, using: &rng)
                : actors[Int.random(in: 0..<actors.count, using: &rng)]
        }
        options += [
            (22, .advance), (9, .fireTimer), (7, .open), (5, .home), (1.5, .lock), (1.5, .unlock), (2, .interrupt),
            (1.5, .forceQuit), (1.5, .install), (1, .uninstall), (profile.multitaskingOff, .multitaskingOff),
            (1, .multitaskingOn), (2, .deviceSwitch), (1.5, .appSwitch), (2, .conditions), (3, .runTask),
            (2, .expireTask), (0.5, .replyAgain(appSlot(&rng))), (1.5, .exit(appSlot(&rng))),
            (0.7, .detach(appSlot(&rng))),
            (busy ? 4 : 0.5, .submit(appSlot(&rng))), (busy ? 1 : 0.2, .cancel(appSlot(&rng))),
            (busy ? 0.5 : 0.1, .cancelAll(appSlot(&rng))), (busy ? 1.5 : 0.2, .fetchInterval(appSlot(&rng))),
            (busy ? 4 : 0.5, .beginTask(appSlot(&rng))), (busy ? 2 : 0.3, .endTask(appSlot(&rng))),
            (busy ? 1 : 0.2, .complete(appSlot(&rng))), (busy ? 2 : 0.2, .reply(appSlot(&rng))),
            (busy ? 2 : 0.2, .audio(appSlot(&rng))), (0.7, .audioInterruption), (busy ? 1 : 0.2, .keepAlive(appSlot(&rng))),
            (busy ? 1 : 0.2, .handOff(appSlot(&rng))), (2, .socketData(int(0...(ModelWorld.appCount - 1)))),
            (1, .systemEvent),
        ]
        if profile.memory > 0 { options.append((profile.memory, .memory)) }
        if profile.accessories > 0 {
            // Accessory commands where an app may have an accessory; a few elsewhere (they must be harmless there).
            let accessoryApps = shell.core.apps.values.contains {
                !$0.app.manifest.backgroundModes.isDisjoint(with: AccessoryRegistration.modes)
            }
            let weight = profile.accessories * (accessoryApps ? 1 : 0.1)
            // Plugging in mostly changes something: in what is out, out what is in.
            let plugSlot = int(0...(ModelWorld.appCount - 1))
            let plugged = shell.accessories.plugged.contains(ModelWorld.accessoryPath(plugSlot))
            options += [
                (weight * (busy ? 1.5 : 0.2), .registerAccessory(appSlot(&rng))),
                (weight * (busy ? 1 : 0.2), .openSession(appSlot(&rng))), (weight * 2.5, .plug(plugSlot, !plugged)),
                (weight * 1.5, .accessoryData(int(0...(ModelWorld.appCount - 1)))),
                (weight * 0.5, .simulateAccessory(int(0...(ModelWorld.appCount - 1)))),
            ]
        }
        if profile.notifications > 0 {
            // Taps mostly where something was delivered; requests mostly from an app that can make them.
            let weight = profile.notifications
            let withDelivered = (0..<ModelWorld.appCount).filter {
                !(shell.core.notifications.delivered[ModelWorld.app($0)] ?? []).isEmpty
            }
            let tapSlot =
                withDelivered.isEmpty
                ? int(0...(ModelWorld.appCount - 1)) : withDelivered[int(0...(withDelivered.count - 1))]
            options += [
                (weight * (busy ? 3 : 0.3), .notify(appSlot(&rng))),
                (weight * (busy ? 0.5 : 0.1), .unnotify(appSlot(&rng))),
                (weight * (busy ? 1.5 : 0.1), .notificationCategories(appSlot(&rng))),
                (weight * (withDelivered.isEmpty ? 0.1 : 2), .tapNotification(tapSlot)), (weight * 0.3, .timeZone),
                (weight * 0.3, .notificationsAllowed),
            ]
        }
        if profile.pushes > 0 {
            // Pushes mostly for slot 0, so that one app's budget is spent; completions where a handler runs.
            let weight = profile.pushes
            let handling = shell.processes.values.contains { !$0.pushRuns.isEmpty }
            options += [
                (weight * 4, .push(weighted([(3, 0), (1, 1), (1, 2)]))),
                (weight * (handling ? 1 : 0.1), .completePush(appSlot(&rng))), (weight * 0.25, .restart),
            ]
        }
        if profile.transfers > 0 {
            // Engine reports where attempts run; continued tasks submitted mostly by the app in front.
            let weight = profile.transfers
            let attempts = shell.transfersModel.attempts.filter { !$0.stopping }.count
            let front = shell.core.device.foregroundApp.flatMap { ModelWorld.slot(of: $0) }
            let withTasks = (0..<ModelWorld.appCount).filter { !shell.core.transfers.tasks(of: ModelWorld.app($0)).isEmpty }
            let changeSlot = withTasks.isEmpty ? int(0...(ModelWorld.appCount - 1)) : withTasks[int(0...(withTasks.count - 1))]
            let continuing = shell.processes.values.reduce(0) { count, process in
                count + (shell.core.apps[process.app]?.process?.runs.filter { $0.progress != nil && !$0.expirationSent }.count ?? 0)
            }
            options += [
                (weight * (busy ? 1 : 0.2), .openTransferSession(appSlot(&rng))),
                (weight * (busy ? 2.5 : 0.3), .createTransfer(appSlot(&rng))),
                (weight * (attempts > 0 ? 3 : 0), .transferProgress), (weight * (attempts > 0 ? 2.5 : 0), .endAttempt),
                (weight * (busy ? 1.5 : 0.2), .handleTransferEvents(appSlot(&rng))),
                (weight * (withTasks.isEmpty ? 0.1 : 1.2), .changeTransfer(changeSlot)),
                (weight * (front != nil ? 4 : 0.2), .submitContinued(front ?? appSlot(&rng))),
                (weight * (continuing > 0 ? 3 : 0.1), .reportContinued(appSlot(&rng))),
                (weight * 0.3, .cancelContinued(int(0...(ModelWorld.appCount - 1)))), (weight * 0.1, .restart),
                (weight * (continuing > 1 ? 2 : 0), .pressure),
            ]
        }
        return make(weighted(options))
    }

    /// What the generator chose, before its arguments are drawn.
    private enum Choice {
        case spawn(Int)
        case reap(Int)
        case attach(Int)
        case reply(Int)
        case replyAgain(Int)
        case beginTask(Int)
        case endTask(Int)
        case complete(Int)
        case exit(Int)
        case detach(Int)
        case submit(Int)
        case cancel(Int)
        case cancelAll(Int)
        case fetchInterval(Int)
        case audio(Int)
        case keepAlive(Int)
        case handOff(Int)
        case socketData(Int)
        case registerAccessory(Int)
        case openSession(Int)
        case plug(Int, Bool)
        case accessoryData(Int)
        case simulateAccessory(Int)
        case notify(Int)
        case unnotify(Int)
        case notificationCategories(Int)
        case tapNotification(Int)
        case answerWillPresent(Int)
        case push(Int)
        case completePush(Int)
        case openTransferSession(Int)
        case createTransfer(Int)
        case handleTransferEvents(Int)
        case completeTransferEvents(Int)
        case changeTransfer(Int)
        case submitContinued(Int)
        case reportContinued(Int)
        case cancelContinued(Int)
        case transferProgress, endAttempt, pressure
        case restart
        case timeZone, notificationsAllowed
        case audioInterruption, systemEvent
        case advance, fireTimer, open, home, lock, unlock, interrupt, forceQuit, install, uninstall
        case multitaskingOff, multitaskingOn, deviceSwitch, appSwitch, conditions, runTask, expireTask, memory
    }

    private mutating func make(_ choice: Choice) -> ModelCommand {
        let anySlot = 0...(ModelWorld.appCount - 1)
        switch choice {
        case .spawn(let slot): return .spawn(slot, weighted([(20, .normal), (2, .ignoresSIGTERM), (1, .failsToStart)]))
        case .reap(let slot): return .reap(slot)
        case .attach(let slot): return .attach(slot)
        case .reply(let slot): return .reply(slot)
        case .replyAgain(let slot): return .replyAgain(slot)
        case .beginTask(let slot): return .beginTask(slot)
        case .endTask(let slot): return .endTask(slot, int(0...3))
        case .complete(let slot):
            return .complete(slot, int(0...2), weighted([(3, .newData), (1, .noData), (1, .failed)]))
        case .exit(let slot):
            return .exit(slot, weighted([(2, .signaled(11)), (1, .exited(1)), (1, .exited(0)), (0.5, .signaled(9))]))
        case .detach(let slot): return .detach(slot)
        case .submit(let slot):
            return .submit(
                slot, weighted([(2, .appRefresh), (1, .processing), (0.1, .fetch)]), earliestAfterSeconds: earliest(),
                network: int(0...1) == 0, power: int(0...2) == 0)
        case .cancel(let slot): return .cancel(slot, kind())
        case .cancelAll(let slot): return .cancelAll(slot)
        case .fetchInterval(let slot):
            return .fetchInterval(slot, weighted([(1, .never), (2, .minimum), (1, .seconds(Double(int(0...7200))))]))
        case .audio(let slot): return .audio(slot, playing: int(0...2) != 0)
        case .audioInterruption: return .audioInterruption(int(0...1) == 0)
        case .keepAlive(let slot): return .keepAlive(slot, seconds: weighted([(6, 600), (2, 900), (1, 599)]))
        case .handOff(let slot): return .handOff(slot)
        case .socketData(let slot): return .socketData(slot, closed: int(0...4) == 0)
        case .systemEvent: return .systemEvent(weighted(SystemEvent.allCases.map { (1, $0) }))
        case .registerAccessory(let slot):
            // Mostly the mode the `modes` manifest declares; sometimes one it does not (SPEC MODE-6).
            return .registerAccessory(slot, weighted([(8, .externalAccessory), (1, .bluetoothCentral)]))
        case .openSession(let slot): return .openSession(slot)
        case .plug(let slot, let likely): return .plug(slot, int(0...5) == 0 ? !likely : likely)
        case .accessoryData(let slot): return .accessoryData(slot, closed: int(0...4) == 0)
        case .simulateAccessory(let slot):
            return .simulateAccessory(slot, weighted(AccessoryEvent.allCases.map { (1, $0) }))
        case .notify(let slot): return .notify(slot, index: int(0...4), trigger())
        case .unnotify(let slot): return .unnotify(slot, index: int(0...3) == 0 ? nil : int(0...4))
        case .notificationCategories(let slot): return .notificationCategories(slot)
        case .tapNotification(let slot):
            return .tapNotification(slot, int(0...3), weighted([(3, .tap), (2, .dismiss), (3, .later), (1, .show)]))
        case .answerWillPresent(let slot): return .answerWillPresent(slot, present: int(0...1) == 0)
        case .push(let slot):
            // One push in four starts a burst of 2 to 7 for the app.
            if int(0...3) == 0 { burst = (slot, int(1...6)) }
            return .push(slot, pushArguments())
        case .completePush(let slot):
            return .completePush(slot, int(0...2), weighted([(3, .newData), (2, .noData), (1, .failed)]))
        case .restart: return .restart
        case .openTransferSession(let slot): return .openTransferSession(slot, session: int(0...1), discretionary: int(0...3) == 0)
        case .createTransfer(let slot):
            return .createTransfer(slot, session: int(0...1), file: int(0...3), discretionary: int(0...4) == 0)
        case .transferProgress: return .transferProgress(int(0...5))
        case .endAttempt:
            return .endAttempt(
                int(0...5),
                weighted([(5, .completed), (2, .transient), (1, .retryAfter), (1, .permanent), (1, .diskFull), (0.5, .cancelled)]))
        case .handleTransferEvents(let slot): return .handleTransferEvents(slot, session: int(0...1))
        case .completeTransferEvents(let slot): return .completeTransferEvents(slot, int(0...2))
        case .changeTransfer(let slot):
            return .changeTransfer(
                slot, int(0...5), weighted([(2, .cancel), (2, .pause), (2, .resume)]), byUser: int(0...2) == 0)
        case .submitContinued(let slot): return .submitContinued(slot, index: int(0...3), queue: int(0...3) != 0)
        case .reportContinued(let slot): return .reportContinued(slot, int(0...2), percent: int(0...100))
        case .cancelContinued(let slot): return .cancelContinued(slot, index: int(0...3))
        case .pressure:
            return weighted([
                (1, .device(.lowPower, true)), (1, .conditions(ConditionOverrides(batteryLevel: 5, charging: false))),
            ])
        case .timeZone: return .timeZone(weighted(ModelWorld.timeZones.map { (1, $0) }))
        case .notificationsAllowed: return .notificationsAllowed(int(anySlot), int(0...3) != 0)
        case .advance: return .advance(ms: duration())
        case .fireTimer: return .fireTimer
        case .open: return .open(int(anySlot))
        case .home: return .home
        case .lock: return .lock
        case .unlock: return .unlock(returningToApp: int(0...3) != 0)
        case .interrupt: return .interrupt(weighted([(1, nil), (1, .accept), (1, .dismiss)]))
        case .forceQuit: return .forceQuit(int(anySlot))
        case .install: return .install(int(anySlot), weighted(profile.variants))
        case .uninstall: return .uninstall(int(anySlot))
        case .multitaskingOff: return .device(.multitasking, false)
        case .multitaskingOn: return .device(.multitasking, true)
        case .deviceSwitch:
            return .device(weighted([(1, .backgroundRefresh), (1, .lowPower), (1, .dataSaver)]), int(0...2) != 0)
        case .appSwitch: return .appSetting(int(anySlot), weighted(AppSwitch.allCases.map { (1, $0) }), int(0...2) != 0)
        case .conditions: return .conditions(conditions())
        case .memory:
            let level = weighted([(2, MemoryPressure.normal), (1, .warning), (1.5, .critical)])
            return weighted([
                (3, .memoryReading(level)), (1.5, .conditions(ConditionOverrides(memoryPressure: level))),
                (1, .conditions(ConditionOverrides())), (1, .memoryWarning(int(anySlot))),
            ])
        case .runTask: return .runTask(int(anySlot), kind())
        case .expireTask: return .expireTask(int(anySlot), kind())
        }
    }

    // MARK: Arguments

    /// A time step from a millisecond to hours, most of them short: the core's own numbers are 1 s to 30 minutes.
    private mutating func duration() -> Int {
        let range = weighted([
            (30, 1...100), (30, 100...5_000), (22, 5_000...60_000), (12, 60_000...1_800_000),
            (6, 1_800_000...21_600_000),
        ])
        return int(range)
    }

    /// A trigger: mostly due within the minutes to hours the time steps cover, sometimes refused (a repeat under 60 s)
    /// or due at once (a date already past).
    private mutating func trigger() -> ModelTrigger {
        switch int(0...9) {
        case 0...2: .after(ms: int(weighted([(2, 1...5_000), (3, 5_000...600_000), (1, 600_000...7_200_000)])))
        case 3...4: .every(seconds: weighted([(1, 30), (3, 60), (2, 90), (2, 600), (1, 3_600)]))
        case 5...7:
            .daily(
                hour: int(0...23), minute: int(0...59),
                zone: weighted([(3, nil), (1, "Europe/Berlin"), (1, "America/New_York")]))
        default: .at(offsetSeconds: int(-600...7_200))
        }
    }

    /// A push: mostly background, some alerts and some both; a collapse id from a small set; sometimes an expiration
    /// a little ahead or already past; sometimes expiration 0 (SPEC NT-4, NT-5).
    private mutating func pushArguments() -> ModelPush {
        ModelPush(
            weighted([(5, .background), (2, .alert), (2, .both)]), collapse: weighted([(2, nil), (1, "a"), (1, "b")]),
            expiresInMs: weighted([(5, nil), (2, int(1...120_000)), (1, int(-60_000...0))]), attemptOnce: int(0...5) == 0)
    }

    private mutating func kind() -> TaskKind { weighted([(2, .appRefresh), (1, .processing), (1, .fetch)]) }

    private mutating func earliest() -> Int? {
        weighted([
            (4, nil), (1, 0), (2, 60), (2, 900), (1, 3_600), (0.5, 86_400 * 2), (0.3, -90_000), (0.3, 86_400 * 8),
        ])
    }

    private mutating func conditions() -> ConditionOverrides {
        ConditionOverrides(
            batteryLevel: weighted([(3, nil), (1, 5), (1, 50), (1, 100)]),
            charging: weighted([(2, nil), (1, true), (1, false)]),
            network: weighted([(2, nil), (1, NetworkKind.none), (1, .metered), (1, .unmetered)]),
            idle: weighted([(2, nil), (1, true), (1, false)]))
    }

    private mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    private mutating func weighted<T>(_ options: [(Double, T)]) -> T {
        let total = options.reduce(0) { $0 + $1.0 }
        var pick = Double.random(in: 0..<total, using: &rng)
        for (weight, value) in options {
            if pick < weight { return value }
            pick -= weight
        }
        return options[options.count - 1].1
    }
}
