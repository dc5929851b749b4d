import Foundation
import OffstageCore

/// How an app's will-present handler answers a notification that fires while it is active (SPEC NT-2).
enum WillPresentAnswer: Hashable, Sendable {
    /// It asks for the notification to be shown to the user too (`[.banner, .list]`).
    case present
    /// It handles the notification itself (`[]`).
    case handle
    /// Its handler returns without choosing.
    case returnOnly
    /// Its handler never returns.
    case ignore
}

/// A shell for the notification tests: it drives ``OffstageCore`` directly on virtual time, plays well-behaved app
/// processes (each starts and attaches at once and answers every callback at once, but for the will-present handlers
/// the test sets), carries out the notification actions on a ``NotificationStoreModel`` as the daemon's store would,
/// shows each delivery once as the desktop does, and can restart the daemon from that store.
///
/// After every input it fires what the core's timer says is due, then checks what must always hold (SPEC NT-2): no
/// delivery key is fired twice, the store and the core agree, nothing due is left unfired, the core's next deadline
/// is no later than its next due notification, and a delivery is marked late exactly when it came more than
/// `notificationLateAfter` after its due time. What it finds broken is in ``problems``.
struct NotificationBench {
    /// The core under test (a new one after ``restart(after:)``).
    private(set) var core: OffstageCore
    /// Virtual time; it only moves forward.
    private(set) var now: Instant
    /// What the daemon's store holds.
    private(set) var store = NotificationStoreModel()
    /// Every action the cores returned, with when.
    private(set) var actions: [(at: Instant, action: CoreAction)] = []
    /// Every firing, in order, across restarts.
    private(set) var fires: [(key: DeliveryKey, delivery: DeliveredNotification?, at: Instant)] = []
    /// What the desktop showed, each key once, in order.
    private(set) var shown: [DeliveredNotification] = []
    /// The callbacks each app's processes were sent, in order.
    private(set) var callbacks: [AppID: [CallbackKind]] = [:]
    /// The launches, in order.
    private(set) var launches: [(app: AppID, reason: LaunchReason)] = []
    /// What broke, in order.
    private(set) var problems: [String] = []
    /// How each app answers will-present (`.handle` unless set).
    var willPresent: [AppID: WillPresentAnswer] = [:]

    private var firedKeys: Set<DeliveryKey> = []
    private var installed: [AppID: Manifest] = [:]
    private var pids: [AppID: Int32] = [:]
    private var frozen: Set<Int32> = []
    private var nextPid: Int32 = 2000
    private var startQueue: [(AppID, LaunchPlan)] = []
    private var exitQueue: [(AppID, Int32, ExitStatus)] = []
    private var inbox: [(AppID, Int32, Callback)] = []
    private var hung: [(AppID, Int32, Callback)] = []

    /// A core with `configuration`, the device in `timeZone`, at `start`.
    init(configuration: CoreConfiguration = .init(), timeZone: String = "UTC", start: Instant = benchStart) {
        var device = DeviceState()
        device.settings.timeZone = timeZone
        core = OffstageCore(configuration: configuration, device: device)
        now = start
    }

    // MARK: The user

    /// Installs a plain app.
    mutating func install(_ id: AppID, modes: Set<BackgroundMode> = [], exitsOnSuspend: Bool = false) {
        let manifest = Manifest(id: id, executable: "app", backgroundModes: modes, exitsOnSuspend: exitsOnSuspend)
        installed[id] = manifest
        let app = InstalledApp(manifest: manifest, bundlePath: "/bench/\(id)", installedAt: now)
        feed { core, now throws(CoreError) in try core.install(app, at: now).1 }
    }

    /// The user opens the app; it launches and becomes active.
    @discardableResult
    mutating func open(_ id: AppID) -> CoreError? { feed { core, now throws(CoreError) in try core.open(id, at: now) } }

    /// The user goes to the home screen.
    mutating func home() { feed { core, now throws(CoreError) in core.home(at: now) } }

    /// The user locks the screen.
    mutating func lock() { feed { core, now throws(CoreError) in core.lock(at: now) } }

    /// The user unlocks the screen.
    mutating func unlock() { feed { core, now throws(CoreError) in core.unlock(at: now) } }

    /// The user force-quits the app.
    mutating func forceQuit(_ id: AppID) { feed { core, now throws(CoreError) in try core.forceQuit(id, at: now) } }

    /// The user uninstalls the app.
    mutating func uninstall(_ id: AppID) { feed { core, now throws(CoreError) in try core.uninstall(id, at: now) } }

    /// The user taps the app's delivered notification or chooses one of its actions.
    @discardableResult
    mutating func tap(
        _ id: AppID, _ identifier: String, action: String = NotificationResponse.defaultAction
    ) -> CoreError? {
        feed { core, now throws(CoreError) in
            try core.respondToNotification(id, identifier: identifier, action: action, at: now)
        }
    }

    /// Turns the app's notifications on or off (SPEC SET-2).
    mutating func allowNotifications(_ id: AppID, _ allowed: Bool) {
        guard var settings = core.apps[id]?.app.settings else { return }
        settings.notifications = allowed
        feed { core, now throws(CoreError) in try core.setAppSettings(settings, for: id, at: now) }
    }

    /// The device's time zone changes.
    mutating func setTimeZone(_ zone: String) {
        var settings = core.device.settings
        settings.timeZone = zone
        feed { core, now throws(CoreError) in core.setDeviceSettings(settings, at: now) }
    }

    // MARK: The app's process

    /// The pid of the app's process, if it has one.
    func pid(of id: AppID) -> Int32? { pids[id] }

    /// The app's process adds a request; returns the identifiers dropped, or the refusal.
    @discardableResult
    mutating func add(_ id: AppID, _ request: NotificationRequest) -> Result<[String], CoreError> {
        guard let pid = pids[id] else {
            return .failure(CoreError(.appNotRunning, "the bench has no process of '\(id)'", fix: "open it"))
        }
        var dropped: [String] = []
        let error = feed { core, now throws(CoreError) in
            let (gone, actions) = try core.addNotification(id, pid: pid, request, at: now)
            dropped = gone
            return actions
        }
        return error.map { .failure($0) } ?? .success(dropped)
    }

    /// Runs an input of the app's process (`pid` is its own), for the inputs the bench has no verb for.
    @discardableResult
    mutating func appInput(
        _ id: AppID, _ body: (inout OffstageCore, Int32, Instant) throws(CoreError) -> [CoreAction]
    ) -> CoreError? {
        let pid = pids[id] ?? -1
        return feed { core, now throws(CoreError) in try body(&core, pid, now) }
    }

    /// The app's process crashes.
    mutating func crash(_ id: AppID) { exit(id, .signaled(11)) }

    /// The app's process exits by itself (status 0 by default).
    mutating func exit(_ id: AppID, _ status: ExitStatus = .exited(0)) {
        guard let pid = pids[id] else { return }
        exitQueue.append((id, pid, status))
        feed { _, _ throws(CoreError) in [] }
    }

    /// The app's hung will-present handlers, oldest first.
    var unanswered: [Callback] { hung.map(\.2) }

    // MARK: Time

    /// Moves time to `target`, firing the core's timer at exactly each deadline on the way.
    mutating func advance(to target: Instant) {
        while let next = core.nextDeadline, next <= target {
            if next > now { now = next }
            feed { core, now throws(CoreError) in core.advance(to: now) }
        }
        if target > now { now = target }
    }

    /// Moves time on by `duration`.
    mutating func advance(by duration: Duration) { advance(to: now + duration) }

    // MARK: Restarts

    /// The daemon stops now (with every app process: a reboot), stays down for `downtime`, and a new one starts from
    /// what the store holds: the apps as their durable state says, the notifications as the store says, then
    /// `recover(at:)` (SPEC NT-2 "also across daemon restarts").
    mutating func restart(after downtime: Duration) {
        let old = core
        var device = old.device
        device.foregroundApp = nil
        device.interruption = nil
        var fresh = OffstageCore(configuration: old.configuration, device: device, numberSeed: old.upcomingNumber)
        for id in old.apps.keys.sorted() {
            guard let entry = old.apps[id] else { continue }
            fresh.restore(entry.app, durable: entry.durable)
        }
        store.restore(into: &fresh)
        core = fresh
        pids = [:]
        frozen = []
        startQueue = []
        exitQueue = []
        inbox = []
        hung = []
        let restored = store.differences(from: core.notifications)
        problems += restored.map { "after restoring: \($0)" }
        now = now + downtime
        feed { core, now throws(CoreError) in core.recover(at: now) }
    }

    // MARK: Inputs

    /// Hands the core one input at `now`, carries out its actions and what the processes do in return, fires what is
    /// due, and checks. Returns the core's refusal, if it refused.
    @discardableResult
    mutating func feed(_ input: (inout OffstageCore, Instant) throws(CoreError) -> [CoreAction]) -> CoreError? {
        var refusal: CoreError?
        do throws(CoreError) {
            perform(try input(&core, now))
        } catch {
            refusal = error
        }
        settle()
        check()
        return refusal
    }

    /// What a shell does at once: starts launches, reports exits, runs the apps' answers, and fires the timer when it
    /// is due now.
    private mutating func settle() {
        while true {
            if !startQueue.isEmpty {
                let (id, plan) = startQueue.removeFirst()
                let pid = nextPid
                nextPid += 1
                pids[id] = pid
                perform(core.processStarted(id, launch: plan.launch, pid: pid, at: now))
                do throws(CoreError) {
                    perform(try core.attached(id, pid: pid, report: .fresh, at: now))
                } catch {
                    problems.append("\(id) pid \(pid) could not attach: \(error)")
                }
            } else if !exitQueue.isEmpty {
                let (id, pid, status) = exitQueue.removeFirst()
                guard pids[id] == pid else { continue }
                pids[id] = nil
                frozen.remove(pid)
                inbox.removeAll { $0.1 == pid }
                hung.removeAll { $0.1 == pid }
                perform(core.processExited(id, pid: pid, status: status, at: now))
            } else if !inbox.isEmpty {
                let (id, pid, callback) = inbox.removeFirst()
                guard pids[id] == pid else { continue }
                answer(callback, id: id, pid: pid)
            } else if let deadline = core.nextDeadline, deadline <= now {
                perform(core.advance(to: now))
            } else {
                break
            }
        }
    }

    private mutating func answer(_ callback: Callback, id: AppID, pid: Int32) {
        if case .notificationWillPresent(let record) = callback.kind {
            let choice = willPresent[id] ?? .handle
            if choice == .ignore {
                hung.append((id, pid, callback))
                return
            }
            if choice != .returnOnly {
                do throws(CoreError) {
                    perform(
                        try core.answerWillPresent(
                            id, pid: pid, key: record.key, presentToUser: choice == .present, at: now))
                } catch {
                    problems.append("\(id) could not answer will-present of \(record.key): \(error)")
                }
            }
        }
        perform(core.callbackCompleted(id, pid: pid, callback: callback.id, at: now))
        if case .willTerminate = callback.kind { exitQueue.append((id, pid, .exited(0))) }
    }

    private mutating func perform(_ returned: [CoreAction]) {
        for action in returned {
            actions.append((now, action))
            switch action {
            case .launch(let id, let plan):
                launches.append((id, plan.reason))
                startQueue.append((id, plan))
            case .deliver(let id, let pid, let callback):
                callbacks[id, default: []].append(callback.kind)
                if case .notificationWillPresent(let record) = callback.kind, store.delivered[record.key] == nil {
                    problems.append("\(record.key) handed to the app before its delivery record was stored")
                }
                if frozen.contains(pid) { problems.append("\(callback.kind) delivered to \(id) while frozen") }
                inbox.append((id, pid, callback))
            case .freeze(_, let pid):
                frozen.insert(pid)
            case .thaw(_, let pid):
                frozen.remove(pid)
            case .terminate(let id, let pid), .kill(let id, let pid):
                exitQueue.append((id, pid, .signaled(15)))
            case .push, .transfer, .continuedProgress, .recordHistory, .network, .usage:
                break  // the bench sends no pushes, makes no transfers, starts no continued processing, reads no history
                // and uses no network
            case .notification(let notification):
                // Persist first, then act: a crash between the two finds the record and shows it again on restart.
                if case .show(let record) = notification, store.delivered[record.key]?.route != .user {
                    problems.append("\(record.key) shown before it was stored as the user's")
                }
                problems += store.apply(notification)
                carryOut(notification)
            case .log, .saveApp, .saveDevice, .forget, .watchSocket, .closeSocket, .watchAccessory, .unwatchAccessory:
                break
            }
        }
    }

    private mutating func carryOut(_ action: NotificationAction) {
        switch action {
        case .fire(let key, let delivery, _):
            if !firedKeys.insert(key).inserted { problems.append("\(key) fired twice") }
            fires.append((key, delivery, now))
            if let delivery {
                let lateAfter = Duration.seconds(double: core.configuration.notificationLateAfter)
                if delivery.late != (delivery.deliveredAt - delivery.due > lateAfter) {
                    problems.append("\(key) delivered at \(delivery.deliveredAt) is marked late \(delivery.late)")
                }
                if delivery.deliveredAt != now { problems.append("\(key) says delivered at \(delivery.deliveredAt)") }
            }
        case .show(let record):
            if !shown.contains(where: { $0.key == record.key }) { shown.append(record) }
        case .forgetApp(let app):
            shown.removeAll { $0.app == app }
        default:
            break
        }
    }

    private mutating func check() {
        problems += store.differences(from: core.notifications)
        for (app, rows) in core.notifications.pending {
            for row in rows.values where row.due <= now {
                problems.append("\(app)/\(row.identifier) due at \(row.due) is left unfired at \(now)")
            }
        }
        if let due = core.notifications.nextDue {
            if due <= now { problems.append("a notification due at \(due) is left unfired at \(now)") }
            if let deadline = core.nextDeadline, deadline <= due {
            } else {
                problems.append("the next deadline \(String(describing: core.nextDeadline)) is later than \(due)")
            }
        }
    }

    // MARK: Reading

    /// The keys fired for the app's request `identifier`, in order.
    func fired(_ id: AppID, _ identifier: String) -> [DeliveryKey] {
        fires.map(\.key).filter { $0.app == id && $0.identifier == identifier }
    }

    /// The instants the app's request `identifier` was due at each firing, in order.
    func dueTimes(_ id: AppID, _ identifier: String) -> [Instant] { fired(id, identifier).map(\.due) }

    /// The notifications of the app shown to the user, in order.
    func shown(_ id: AppID) -> [DeliveredNotification] { shown.filter { $0.app == id } }

    /// The callbacks the app was sent, by wire name, from position `from` on.
    func callbackNames(_ id: AppID, from: Int = 0) -> [String] {
        Array((callbacks[id] ?? []).dropFirst(from)).map(\.name)
    }

    /// The app's state.
    func state(_ id: AppID) -> ApplicationState { core.apps[id]?.state ?? .notRunning }

    /// The notification actions returned since action number `from`.
    func notificationActions(from: Int) -> [NotificationAction] {
        actions.dropFirst(from).compactMap { if case .notification(let action) = $0.action { action } else { nil } }
    }
}

/// 2026-01-01 12:00 UTC: the benches' start.
let benchStart = Instant(secondsSinceEpoch: 1_767_268_800)

/// A request with a title and `trigger`.
func notification(
    _ identifier: String, _ trigger: NotificationTrigger, badge: Int? = nil, category: String = ""
) -> NotificationRequest {
    NotificationRequest(
        identifier: identifier,
        content: NotificationContent(title: identifier, badge: badge, categoryIdentifier: category),
        trigger: trigger)
}

/// The instant of a local time in a zone, for expectations (computed with Foundation independently of the core's
/// trigger code, from a wall-clock text such as `2026-03-29T07:00:00`).
func localInstant(_ text: String, _ zone: String) -> Instant {
    let numbers = text.split { !$0.isNumber }.compactMap { Int($0) }
    guard numbers.count == 6, let timeZone = TimeZone(identifier: zone) else { fatalError("not a local time: \(text)") }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    let components = DateComponents(
        year: numbers[0], month: numbers[1], day: numbers[2], hour: numbers[3], minute: numbers[4], second: numbers[5])
    guard let date = calendar.date(from: components) else { fatalError("not a local time: \(text)") }
    return Instant(secondsSinceEpoch: date.timeIntervalSince1970)
}

/// The local wall-clock text of an instant in a zone (`2026-03-29T07:00:00`).
func localText(_ instant: Instant, _ zone: String) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: zone)!
    let date = Date(timeIntervalSince1970: instant.secondsSinceEpoch)
    let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
    func two(_ value: Int?) -> String { (value ?? 0) < 10 ? "0\(value ?? 0)" : "\(value ?? 0)" }
    let day = "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day))"
    return day + "T\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
}
