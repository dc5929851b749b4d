/// Why a pending request was not running, as the history records it (SPEC SCH-8, decision 0044): one reason per
/// ``Hold`` case (finer than the hold's controller, whose name each reason also gives), plus the waits no condition
/// causes: the scheduler's planned time, and a continued-processing request's wait for a slot.
///
/// The raw values are stable names for scripts and the store.
public enum WaitReason: String, Hashable, Sendable, Codable, CaseIterable, Comparable {
    /// ``Hold/refreshOffGlobally``.
    case refreshOffGlobally = "refresh-off-globally"
    /// ``Hold/refreshOffForApp``.
    case refreshOffForApp = "refresh-off-for-app"
    /// ``Hold/backgroundActivityOff``.
    case backgroundActivityOff = "background-activity-off"
    /// ``Hold/lowPowerMode``.
    case lowPowerMode = "low-power-mode"
    /// ``Hold/forceQuit``.
    case forceQuit = "force-quit"
    /// ``Hold/exitsOnSuspend``.
    case exitsOnSuspend = "exits-on-suspend"
    /// ``Hold/multitaskingOff``.
    case multitaskingOff = "multitasking-off"
    /// ``Hold/inForeground``.
    case inForeground = "in-foreground"
    /// ``Hold/terminating``.
    case terminating = "terminating"
    /// ``Hold/crashLoop(until:)``.
    case crashLoop = "crash-loop"
    /// ``Hold/earliestBegin(_:)``.
    case earliestBegin = "earliest-begin"
    /// ``Hold/fetchIntervalNever``.
    case fetchIntervalNever = "fetch-interval-never"
    /// ``Hold/fetchInterval(next:)``.
    case fetchInterval = "fetch-interval"
    /// ``Hold/noNetwork``.
    case noNetwork = "no-network"
    /// ``Hold/backgroundDataRestricted``.
    case backgroundDataRestricted = "background-data-restricted"
    /// ``Hold/dataSaver``.
    case dataSaver = "data-saver"
    /// ``Hold/externalPower``.
    case externalPower = "external-power"
    /// ``Hold/deviceNotIdle``.
    case deviceNotIdle = "device-not-idle"
    /// ``Hold/batteryLow(level:minimum:)``.
    case batteryLow = "battery-low"
    /// ``Hold/dailyBudget(used:budget:resetsAt:)``.
    case dailyBudget = "daily-budget"
    /// ``Hold/retryBackoff(until:)``.
    case retryBackoff = "retry-backoff"
    /// ``Hold/meteredNotAllowed``.
    case meteredNotAllowed = "metered-not-allowed"
    /// ``Hold/unmeteredNetworkWanted``.
    case unmeteredNetworkWanted = "unmetered-network-wanted"
    /// No condition held it: the policy chose a later time (or waits for a moment it prefers).
    case plannedTime = "planned-time"
    /// A continued-processing request waited for one of the device's slots (SPEC SCH-11).
    case continuedSlot = "continued-slot"

    public static func < (lhs: WaitReason, rhs: WaitReason) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The controller that checks it, the one source of ``Hold/controller`` (`policy` and `slots` for the two waits no
    /// condition causes).
    public var controller: String {
        switch self {
        case .refreshOffGlobally, .refreshOffForApp: "refresh-switch"
        case .backgroundActivityOff: "background-activity"
        case .lowPowerMode: "low-power"
        case .forceQuit: "force-quit"
        case .exitsOnSuspend, .multitaskingOff: "multitasking"
        case .inForeground, .terminating: "app-state"
        case .crashLoop: "crash-loop"
        case .earliestBegin, .fetchIntervalNever, .fetchInterval: "time-window"
        case .noNetwork, .meteredNotAllowed, .unmeteredNetworkWanted: "network"
        case .backgroundDataRestricted, .dataSaver: "data"
        case .externalPower: "power"
        case .deviceNotIdle: "idle"
        case .batteryLow: "battery"
        case .dailyBudget: "budget"
        case .retryBackoff: "retry"
        case .plannedTime: "policy"
        case .continuedSlot: "slots"
        }
    }

    /// A few words for people: "held back: no network 2 h 0 min".
    public var label: String {
        switch self {
        case .refreshOffGlobally: "background refresh off (device)"
        case .refreshOffForApp: "background refresh off (app)"
        case .backgroundActivityOff: "background activity off"
        case .lowPowerMode: "low power mode"
        case .forceQuit: "force-quit by the user"
        case .exitsOnSuspend: "exits on suspend"
        case .multitaskingOff: "multitasking off"
        case .inForeground: "app in the foreground"
        case .terminating: "app terminating"
        case .crashLoop: "crash throttling"
        case .earliestBegin: "earliest begin date"
        case .fetchIntervalNever: "fetch interval never"
        case .fetchInterval: "fetch interval"
        case .noNetwork: "no network"
        case .backgroundDataRestricted: "background data restricted"
        case .dataSaver: "data saver"
        case .externalPower: "external power"
        case .deviceNotIdle: "device not idle"
        case .batteryLow: "battery low"
        case .dailyBudget: "daily budget spent"
        case .retryBackoff: "retry backoff"
        case .meteredNotAllowed: "metered network not allowed"
        case .unmeteredNetworkWanted: "waiting for an unmetered network"
        case .plannedTime: "the scheduler's planned time"
        case .continuedSlot: "a continued-processing slot"
        }
    }
}

extension Hold {
    /// The history's name for this hold (its case, without the values).
    public var waitReason: WaitReason {
        switch self {
        case .refreshOffGlobally: .refreshOffGlobally
        case .refreshOffForApp: .refreshOffForApp
        case .backgroundActivityOff: .backgroundActivityOff
        case .lowPowerMode: .lowPowerMode
        case .forceQuit: .forceQuit
        case .exitsOnSuspend: .exitsOnSuspend
        case .multitaskingOff: .multitaskingOff
        case .inForeground: .inForeground
        case .terminating: .terminating
        case .crashLoop: .crashLoop
        case .earliestBegin: .earliestBegin
        case .fetchIntervalNever: .fetchIntervalNever
        case .fetchInterval: .fetchInterval
        case .noNetwork: .noNetwork
        case .backgroundDataRestricted: .backgroundDataRestricted
        case .dataSaver: .dataSaver
        case .externalPower: .externalPower
        case .deviceNotIdle: .deviceNotIdle
        case .batteryLow: .batteryLow
        case .dailyBudget: .dailyBudget
        case .retryBackoff: .retryBackoff
        case .meteredNotAllowed: .meteredNotAllowed
        case .unmeteredNetworkWanted: .unmeteredNetworkWanted
        }
    }
}
