import OffstageCore

/// One input of the model-based tests: something the user, the device, a developer or an app process does, or time
/// passing.
///
/// Commands name apps by slot (0 ..< ``ModelWorld/appCount``) and tasks and runs by position, never by a number the
/// core handed out, so a command keeps a meaning when the shrinker deletes the commands before it: a command that no
/// longer applies (opening an app that is not installed, replying with nothing in flight) does nothing or is refused by
/// the core, which is itself part of what is tested. The description of a command is Swift source, so a minimal
/// failing sequence printed by the shrinker can be pasted into a regression test.
enum ModelCommand: Hashable, Sendable, CustomStringConvertible {
    // MARK: The user

    /// Installs the app of a slot with a manifest of this kind; installing an installed app upgrades it (SPEC MAN-3).
    case install(Int, ManifestVariant)
    /// Uninstalls the app of a slot (SPEC MAN-3).
    case uninstall(Int)
    /// Opens the app of a slot (SPEC LC-2).
    case open(Int)
    /// Goes to the home screen.
    case home
    /// Locks the screen.
    case lock
    /// Unlocks the screen, back to the app that was in front or to the home screen.
    case unlock(returningToApp: Bool)
    /// Begins an interruption (nil) or ends it (SPEC LC-2).
    case interrupt(OffstageCore.InterruptionResolution?)
    /// Force-quits the app of a slot (SPEC LC-6).
    case forceQuit(Int)

    // MARK: Settings and conditions

    /// Turns a device setting on or off (SPEC SET-1, LC-7).
    case device(DeviceSwitch, Bool)
    /// Turns a per-app setting on or off (SPEC SET-2).
    case appSetting(Int, AppSwitch, Bool)
    /// Sets the device's conditions by hand (SPEC SCH-6).
    case conditions(ConditionOverrides)
    /// The daemon reads the machine's memory pressure (SPEC MEM-1): changed or not, it is a reading.
    case memoryReading(MemoryPressure)
    /// `offstage memory-warning` for one app (SPEC MEM-1).
    case memoryWarning(Int)

    // MARK: Debug verbs (SPEC SCH-9)

    /// Runs the slot's request of this kind now (`.fetch` is the legacy fetch).
    case runTask(Int, TaskKind)
    /// Calls the expiration handler of the slot's running task of this kind now.
    case expireTask(Int, TaskKind)

    // MARK: The app's process

    /// The shell starts the process of the slot's pending launch, which behaves as `ProcessTrait` says.
    case spawn(Int, ProcessTrait)
    /// The slot's process attaches its callback stream (SPEC LC-8).
    case attach(Int)
    /// The slot's callback stream closes while the process lives on (SPEC LC-8).
    case detach(Int)
    /// The slot's process answers the oldest callback it has not answered (its handler returned).
    case reply(Int)
    /// The slot's process answers, again, the last callback it already answered: a late or repeated reply.
    case replyAgain(Int)
    /// The slot's process begins a background task (SPEC BT-1).
    case beginTask(Int)
    /// The slot's process ends its open background task at this position, or an unknown one if it has none.
    case endTask(Int, Int)
    /// The slot's process completes its scheduled run at this position, or an unknown one if it has none (SPEC SCH-3).
    case complete(Int, Int, TaskResult)
    /// The slot's process submits a request (SPEC SCH-2).
    case submit(Int, TaskKind, earliestAfterSeconds: Int?, network: Bool, power: Bool)
    /// The slot's process cancels its request of this kind.
    case cancel(Int, TaskKind)
    /// The slot's process cancels every pending request.
    case cancelAll(Int)
    /// The slot's process sets its legacy fetch interval (SPEC SCH-4).
    case fetchInterval(Int, FetchInterval)
    /// The slot's process ends by itself with this status (a crash, or a clean exit with 0), frozen or not.
    case exit(Int, ExitStatus)
    /// The shell reports the exit of the slot's process that has died and not yet been reported.
    case reap(Int)

    // MARK: Modes and system events (SPEC §7, LC-4)

    /// The slot's process activates a playback session and plays (true), or stops playing (false) (SPEC MODE-1).
    case audio(Int, playing: Bool)
    /// A system audio interruption begins (true) or ends (SPEC MODE-1).
    case audioInterruption(Bool)
    /// The slot's process sets its VoIP keep-alive timeout (SPEC MODE-2); under 600 s it is refused.
    case keepAlive(Int, seconds: Int)
    /// The slot's process hands off a socket (SPEC MODE-2).
    case handOff(Int)
    /// Data (or a hang-up) arrives on the slot's handed-off socket; only a watched one reports it.
    case socketData(Int, closed: Bool)
    /// A system event for every app (SPEC LC-4).
    case systemEvent(SystemEvent)
    /// The slot's process registers its accessory in this mode (SPEC MODE-4); one the manifest does not declare is
    /// refused (MODE-6).
    case registerAccessory(Int, BackgroundMode)
    /// The slot's process hands off a session to its accessory (SPEC MODE-4).
    case openSession(Int)
    /// The slot's accessory is plugged in (true) or unplugged: every watch of its path reports.
    case plug(Int, Bool)
    /// Data (or a hang-up) arrives on the slot's accessory session; only a watched one reports it.
    case accessoryData(Int, closed: Bool)
    /// `offstage accessory event` for the slot's accessory.
    case simulateAccessory(Int, AccessoryEvent)

    // MARK: Notifications (SPEC NT-1, NT-2)

    /// The slot's process adds the request `n<index>` with this trigger (replacing one with that identifier).
    case notify(Int, index: Int, ModelTrigger)
    /// The slot's process removes its pending request `n<index>`, or every one (nil).
    case unnotify(Int, index: Int?)
    /// The slot's process registers ``ModelWorld/notificationCategory``.
    case notificationCategories(Int)
    /// The user chooses this on the slot's delivered notification at this position (of those it has, oldest first).
    case tapNotification(Int, Int, ModelTap)
    /// The slot's process answers the oldest will-present it was sent and has not returned from: the user should see
    /// the notification too, or not.
    case answerWillPresent(Int, present: Bool)
    /// The device's time zone changes (calendar triggers that name none follow it).
    case timeZone(String)
    /// The user turns the slot's notifications on or off (SPEC SET-2).
    case notificationsAllowed(Int, Bool)

    // MARK: Pushes (SPEC NT-4, NT-5)

    /// The gateway hands in a push for the slot's app.
    case push(Int, ModelPush)
    /// The slot's process completes the remote-notification handler run at this position (of those it was handed
    /// and has not completed), or an unknown run if it has none. A run never completed is ended by the core.
    case completePush(Int, Int, TaskResult)
    // MARK: Transfers and continued processing (SPEC TR-1..6, SCH-11)

    /// The slot's process opens its background session `s<session>`, discretionary or not (SPEC TR-1).
    case openTransferSession(Int, session: Int, discretionary: Bool)
    /// The slot's process creates a download of the model server's file `file` in its session `s<session>`.
    case createTransfer(Int, session: Int, file: Int, discretionary: Bool)
    /// The engine moves bytes of its attempt at this position, oldest first: a checkpoint (SPEC TR-6).
    case transferProgress(Int)
    /// The engine's attempt at this position ends so (SPEC TR-4).
    case endAttempt(Int, ModelAttemptEnd)
    /// The slot's process recreates its session `s<session>`, fetches its events and handles every finished task
    /// (SPEC TR-3).
    case handleTransferEvents(Int, session: Int)
    /// The slot's process calls the completion handler of its handle-events run at this position, or of an unknown
    /// run if it has none.
    case completeTransferEvents(Int, Int)
    /// The slot's app, or the user by hand, changes the app's task at this position.
    case changeTransfer(Int, Int, TransferChange, byUser: Bool)
    /// The slot's process submits continued-processing task `index`, queued or fail-if-not-now (SPEC SCH-11).
    case submitContinued(Int, index: Int, queue: Bool)
    /// The slot's process reports this percentage done of its continued task at this position.
    case reportContinued(Int, Int, percent: Int)
    /// The user cancels the slot's continued-processing task `index` (`offstage cancel-task`).
    case cancelContinued(Int, index: Int)

    /// The daemon restarts, and every app process ends with it (the device rebooted): the new core is built from
    /// what the store kept, as the daemon starts (held pushes held again, handed ones recorded cut off, accepted ones
    /// handed in again).
    case restart

    // MARK: Time

    /// Time passes; every timer the core asks for fires at exactly its deadline on the way.
    case advance(ms: Int)
    /// Time passes to the core's next deadline, and that timer fires.
    case fireTimer

    var description: String {
        switch self {
        case .install(let slot, let variant): ".install(\(slot), .\(variant))"
        case .uninstall(let slot): ".uninstall(\(slot))"
        case .open(let slot): ".open(\(slot))"
        case .home: ".home"
        case .lock: ".lock"
        case .unlock(let back): ".unlock(returningToApp: \(back))"
        case .interrupt(let resolution): ".interrupt(\(resolution.map { ".\($0)" } ?? "nil"))"
        case .forceQuit(let slot): ".forceQuit(\(slot))"
        case .device(let key, let on): ".device(.\(key), \(on))"
        case .appSetting(let slot, let key, let on): ".appSetting(\(slot), .\(key), \(on))"
        case .conditions(let overrides): ".conditions(\(Self.describe(overrides)))"
        case .memoryReading(let level): ".memoryReading(.\(level))"
        case .memoryWarning(let slot): ".memoryWarning(\(slot))"
        case .runTask(let slot, let kind): ".runTask(\(slot), .\(Self.describe(kind)))"
        case .expireTask(let slot, let kind): ".expireTask(\(slot), .\(Self.describe(kind)))"
        case .spawn(let slot, let trait): ".spawn(\(slot), .\(trait))"
        case .attach(let slot): ".attach(\(slot))"
        case .detach(let slot): ".detach(\(slot))"
        case .reply(let slot): ".reply(\(slot))"
        case .replyAgain(let slot): ".replyAgain(\(slot))"
        case .beginTask(let slot): ".beginTask(\(slot))"
        case .endTask(let slot, let index): ".endTask(\(slot), \(index))"
        case .complete(let slot, let index, let result): ".complete(\(slot), \(index), .\(result))"
        case .submit(let slot, let kind, let after, let network, let power):
            ".submit(\(slot), .\(Self.describe(kind)), earliestAfterSeconds: \(after.map(String.init) ?? "nil"), "
                + "network: \(network), power: \(power))"
        case .cancel(let slot, let kind): ".cancel(\(slot), .\(Self.describe(kind)))"
        case .cancelAll(let slot): ".cancelAll(\(slot))"
        case .fetchInterval(let slot, let interval): ".fetchInterval(\(slot), \(Self.describe(interval)))"
        case .exit(let slot, let status): ".exit(\(slot), \(Self.describe(status)))"
        case .reap(let slot): ".reap(\(slot))"
        case .audio(let slot, let playing): ".audio(\(slot), playing: \(playing))"
        case .audioInterruption(let began): ".audioInterruption(\(began))"
        case .keepAlive(let slot, let seconds): ".keepAlive(\(slot), seconds: \(seconds))"
        case .handOff(let slot): ".handOff(\(slot))"
        case .socketData(let slot, let closed): ".socketData(\(slot), closed: \(closed))"
        case .systemEvent(let event): ".systemEvent(.\(event.caseName))"
        case .registerAccessory(let slot, let mode): ".registerAccessory(\(slot), .\(Self.describe(mode)))"
        case .openSession(let slot): ".openSession(\(slot))"
        case .plug(let slot, let on): ".plug(\(slot), \(on))"
        case .accessoryData(let slot, let closed): ".accessoryData(\(slot), closed: \(closed))"
        case .simulateAccessory(let slot, let event): ".simulateAccessory(\(slot), .\(event))"
        case .notify(let slot, let index, let trigger): ".notify(\(slot), index: \(index), \(trigger))"
        case .unnotify(let slot, let index): ".unnotify(\(slot), index: \(index.map(String.init) ?? "nil"))"
        case .notificationCategories(let slot): ".notificationCategories(\(slot))"
        case .tapNotification(let slot, let index, let tap): ".tapNotification(\(slot), \(index), .\(tap))"
        case .answerWillPresent(let slot, let present): ".answerWillPresent(\(slot), present: \(present))"
        case .timeZone(let zone): ".timeZone(\"\(zone)\")"
        case .notificationsAllowed(let slot, let on): ".notificationsAllowed(\(slot), \(on))"
        case .push(let slot, let push): ".push(\(slot), \(push))"
        case .completePush(let slot, let index, let result): ".completePush(\(slot), \(index), .\(result))"
        case .openTransferSession(let slot, let session, let discretionary):
            ".openTransferSession(\(slot), session: \(session), discretionary: \(discretionary))"
        case .createTransfer(let slot, let session, let file, let discretionary):
            ".createTransfer(\(slot), session: \(session), file: \(file), discretionary: \(discretionary))"
        case .transferProgress(let index): ".transferProgress(\(index))"
        case .endAttempt(let index, let end): ".endAttempt(\(index), .\(end))"
        case .handleTransferEvents(let slot, let session): ".handleTransferEvents(\(slot), session: \(session))"
        case .completeTransferEvents(let slot, let index): ".completeTransferEvents(\(slot), \(index))"
        case .changeTransfer(let slot, let index, let change, let byUser):
            ".changeTransfer(\(slot), \(index), .\(change), byUser: \(byUser))"
        case .submitContinued(let slot, let index, let queue): ".submitContinued(\(slot), index: \(index), queue: \(queue))"
        case .reportContinued(let slot, let index, let percent): ".reportContinued(\(slot), \(index), percent: \(percent))"
        case .cancelContinued(let slot, let index): ".cancelContinued(\(slot), index: \(index))"
        case .restart: ".restart"
        case .advance(let ms): ".advance(ms: \(ms))"
        case .fireTimer: ".fireTimer"
        }
    }

    /// The slot the command concerns, if it concerns one app.
    var slot: Int? {
        switch self {
        case .install(let slot, _), .uninstall(let slot), .open(let slot), .forceQuit(let slot),
            .appSetting(let slot, _, _), .runTask(let slot, _), .expireTask(let slot, _), .spawn(let slot, _),
            .attach(let slot), .detach(let slot), .reply(let slot), .replyAgain(let slot), .beginTask(let slot),
            .endTask(let slot, _), .complete(let slot, _, _), .submit(let slot, _, _, _, _), .cancel(let slot, _),
            .cancelAll(let slot), .fetchInterval(let slot, _), .exit(let slot, _), .reap(let slot), .audio(let slot, _),
            .keepAlive(let slot, _), .handOff(let slot), .socketData(let slot, _), .registerAccessory(let slot, _),
            .openSession(let slot), .plug(let slot, _), .accessoryData(let slot, _), .simulateAccessory(let slot, _),
            .notify(let slot, _, _), .unnotify(let slot, _), .notificationCategories(let slot),
            .tapNotification(let slot, _, _), .answerWillPresent(let slot, _), .notificationsAllowed(let slot, _),
            .push(let slot, _), .completePush(let slot, _, _), .openTransferSession(let slot, _, _),
            .createTransfer(let slot, _, _, _), .handleTransferEvents(let slot, _), .completeTransferEvents(let slot, _),
            .changeTransfer(let slot, _, _, _), .submitContinued(let slot, _, _), .reportContinued(let slot, _, _),
            .cancelContinued(let slot, _), .memoryWarning(let slot):
            slot
        case .home, .lock, .unlock, .interrupt, .device, .conditions, .memoryReading, .advance, .fireTimer, .audioInterruption,
            .systemEvent, .timeZone, .restart, .transferProgress, .endAttempt:
            nil
        }
    }

    // The case names of TaskKind differ from their raw values (`appRefresh` is "refresh").
    private static func describe(_ kind: TaskKind) -> String {
        switch kind {
        case .appRefresh: "appRefresh"
        case .processing: "processing"
        case .fetch: "fetch"
        case .continued: "continued"
        }
    }

    // The case names of BackgroundMode differ from their raw values (`externalAccessory` is "external-accessory").
    private static func describe(_ mode: BackgroundMode) -> String {
        let words = mode.rawValue.split(separator: "-")
        return String(words[0]) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    private static func describe(_ interval: FetchInterval) -> String {
        switch interval {
        case .never: ".never"
        case .minimum: ".minimum"
        case .seconds(let seconds): ".seconds(\(seconds))"
        }
    }

    private static func describe(_ status: ExitStatus) -> String {
        switch status {
        case .exited(let code): ".exited(\(code))"
        case .signaled(let signal): ".signaled(\(signal))"
        case .unknown: ".unknown"
        }
    }

    private static func describe(_ overrides: ConditionOverrides) -> String {
        var parts: [String] = []
        if let level = overrides.batteryLevel { parts.append("batteryLevel: \(level)") }
        if let charging = overrides.charging { parts.append("charging: \(charging)") }
        if let network = overrides.network { parts.append("network: .\(network)") }
        if let idle = overrides.idle { parts.append("idle: \(idle)") }
        if let level = overrides.memoryPressure { parts.append("memoryPressure: .\(level)") }
        return ".init(\(parts.joined(separator: ", ")))"
    }
}

/// A trigger of the model's notification requests, written so a reproduction reads as Swift source.
enum ModelTrigger: Hashable, Sendable, CustomStringConvertible {
    /// Once, this many milliseconds after it is added.
    case after(ms: Int)
    /// Every this many seconds (under the minimum of 60 s it is refused).
    case every(seconds: Int)
    /// Every day at this time, in this zone or, with none, the device's.
    case daily(hour: Int, minute: Int, zone: String?)
    /// Once, at this many seconds from when it is added (a date in the past fires at once).
    case at(offsetSeconds: Int)

    /// The trigger of a request added at `now`.
    func trigger(at now: Instant) -> NotificationTrigger {
        switch self {
        case .after(let ms): .timeInterval(seconds: Double(ms) / 1_000, repeats: false)
        case .every(let seconds): .timeInterval(seconds: Double(seconds), repeats: true)
        case .daily(let hour, let minute, let zone):
            .calendar(DateMatch(hour: hour, minute: minute, timeZone: zone), repeats: true)
        case .at(let offset): .date(now + .seconds(offset))
        }
    }

    var description: String {
        switch self {
        case .after(let ms): ".after(ms: \(ms))"
        case .every(let seconds): ".every(seconds: \(seconds))"
        case .daily(let hour, let minute, let zone):
            ".daily(hour: \(hour), minute: \(minute), zone: \(zone.map { "\"\($0)\"" } ?? "nil"))"
        case .at(let offset): ".at(offsetSeconds: \(offset))"
        }
    }
}

/// What the user chooses on a delivered notification.
enum ModelTap: String, CaseIterable, Hashable, Sendable {
    /// A tap on the notification itself: it opens the app.
    case tap
    /// The user dismisses it.
    case dismiss
    /// The category's action the app handles in the background.
    case later
    /// The category's action that opens the app.
    case show

    /// The action identifier the core receives.
    var actionIdentifier: String {
        switch self {
        case .tap: NotificationResponse.defaultAction
        case .dismiss: NotificationResponse.dismissAction
        case .later, .show: rawValue
        }
    }
}
