/// Why a pending request does not run now: one condition that is not met, named after the controller that checks
/// it (SPEC SCH-6, SCH-8). Every pending request that does not run has at least one hold or a planned time.
public enum Hold: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Background app refresh is off for the whole device.
    case refreshOffGlobally
    /// Background app refresh is off for this app.
    case refreshOffForApp
    /// The user turned off all background activity of this app.
    case backgroundActivityOff
    /// Low power mode is on.
    case lowPowerMode
    /// The user force-quit the app and has not opened it since (SPEC LC-6).
    case forceQuit
    /// The app never runs in the background: it declares `UIApplicationExitsOnSuspend` (SPEC LC-7).
    case exitsOnSuspend
    /// The device does not support multitasking: no app runs in the background (SPEC LC-7).
    case multitaskingOff
    /// The app is in the foreground; background work waits until it leaves.
    case inForeground
    /// The app is being terminated.
    case terminating
    /// The app crashed in the background and is throttled until then (SPEC LC-9).
    case crashLoop(until: Instant)
    /// The request's earliest begin date has not come.
    case earliestBegin(Instant)
    /// The legacy fetch interval is `never`.
    case fetchIntervalNever
    /// The legacy fetch interval has not passed since the last fetch.
    case fetchInterval(next: Instant)
    /// The request needs a network and there is none.
    case noNetwork
    /// The user restricted the app's background data and the network is metered.
    case backgroundDataRestricted
    /// Data saver is on, the network is metered and the app is not exempt.
    case dataSaver
    /// The request needs external power and the device is on battery.
    case externalPower
    /// Processing runs only while the device is idle.
    case deviceNotIdle
    /// The battery is below the level under which background work waits for a charger.
    case batteryLow(level: Int, minimum: Int)
    /// The app spent its daily background budget on battery.
    case dailyBudget(used: Double, budget: Double, resetsAt: Instant)
    /// A transfer failed and waits before trying again (SPEC TR-4).
    case retryBackoff(until: Instant)
    /// The transfer's session does not allow metered networks, and the network is metered (SPEC TR-5).
    case meteredNotAllowed
    /// A discretionary transfer waits for an unmetered network (SPEC TR-5).
    case unmeteredNetworkWanted

    /// The controller that checks this condition, a stable name for scripts (the history's reason names it too).
    public var controller: String { waitReason.controller }

    /// When the condition lifts by itself, if time alone lifts it.
    public var liftsAt: Instant? {
        switch self {
        case .crashLoop(let until): until
        case .earliestBegin(let at): at
        case .fetchInterval(let next): next
        case .dailyBudget(_, _, let resetsAt): resetsAt
        case .retryBackoff(let until): until
        default: nil
        }
    }

    /// For people: what holds the request back and, where there is one, what lifts it.
    public var description: String {
        switch self {
        case .refreshOffGlobally: "background app refresh is off for the device (`offstage settings background-refresh=on`)"
        case .refreshOffForApp: "background app refresh is off for this app (`offstage settings --app APP background-refresh=on`)"
        case .backgroundActivityOff: "background activity is off for this app"
        case .lowPowerMode: "low power mode is on"
        case .forceQuit: "the user force-quit the app; it runs again in the background after the user opens it"
        case .exitsOnSuspend: "the app exits on suspend (UIApplicationExitsOnSuspend), so it never runs in the background"
        case .multitaskingOff:
            "multitasking is off for the device, so no app runs in the background (`offstage settings multitasking=on`)"
        case .inForeground: "the app is in the foreground"
        case .terminating: "the app is being terminated"
        case .crashLoop(let until): "the app crashed in the background; throttled until \(until.clockTime)"
        case .earliestBegin(let at): "its earliest begin date \(at.clockTime) has not come"
        case .fetchIntervalNever:
            "legacy background fetch is not in use: its interval is 'never' (the default); the app turns it on with setMinimumBackgroundFetchInterval"
        case .fetchInterval(let next): "the minimum background fetch interval has not passed (next at \(next.clockTime))"
        case .noNetwork: "it requires a network and there is none"
        case .backgroundDataRestricted: "background data restricted on a metered network"
        case .dataSaver: "data saver is on and the network is metered"
        case .externalPower: "it requires external power and the device is on battery"
        case .deviceNotIdle: "processing runs only while the device is idle"
        case .batteryLow(let level, let minimum): "the battery is at \(level) %, below \(minimum) %, and not charging"
        case .dailyBudget(let used, let budget, let resetsAt):
            "the app spent its daily background budget (\(format(used)) of \(format(budget)) s on battery); resets at \(resetsAt.clockTime)"
        case .retryBackoff(let until): "it failed and tries again at \(until.clockTime)"
        case .meteredNotAllowed: "its session does not allow metered networks and the network is metered"
        case .unmeteredNetworkWanted: "it is discretionary and waits for an unmetered network"
        }
    }
}

extension Instant {
    /// `HH:MM:SS` in UTC, for explanations (the CLI shows full dates in local time).
    public var clockTime: String {
        let seconds = nanosecondsSinceEpoch / 1_000_000_000
        let inDay = ((seconds % 86_400) + 86_400) % 86_400
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60)) UTC"
    }
}
