/// How a process ended, as the shell observed it.
public enum ExitStatus: Hashable, Sendable, Codable, CustomStringConvertible {
    /// It called `exit` with this code.
    case exited(Int32)
    /// A signal ended it.
    case signaled(Int32)
    /// It was not the daemon's child (adopted after a restart), so its status could not be read.
    case unknown

    /// A non-zero exit or death by signal.
    public var isAbnormal: Bool {
        switch self {
        case .exited(let code): code != 0
        case .signaled: true
        case .unknown: false
        }
    }

    public var description: String {
        switch self {
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal): "killed by signal \(signal)"
        case .unknown: "exited (status unknown)"
        }
    }
}

/// Why the system ended an app (recorded and shown by the CLI).
public enum TerminationReason: Hashable, Sendable, Codable, CustomStringConvertible {
    /// `UIApplicationExitsOnSuspend` or multitasking not supported: the app left the foreground (SPEC LC-7).
    case exitsOnSuspend
    /// The user force-quit it (SPEC LC-6).
    case forceQuit
    /// Multitasking was turned off for the device while the app was out of the foreground (SPEC LC-7).
    case multitaskingOff
    /// It was uninstalled.
    case uninstalled
    /// A new version was installed.
    case upgraded
    /// The daemon is shutting down.
    case shutdown
    /// The process could not be started (the executable could not be run).
    case launchFailed(String)
    /// did-finish-launching did not return in time (SPEC LC-3).
    case launchTimeout(seconds: Double)
    /// A lifecycle callback did not return in time (SPEC LC-3).
    case callbackTimeout(callback: String, seconds: Double)
    /// Background tasks were still open when the budget ended (SPEC BT-4).
    case backgroundTaskOverrun(tasks: [String], seconds: Double)
    /// An adopted app did not reattach after a daemon restart.
    case didNotReattach(seconds: Double)
    /// The app could not be frozen; an app that cannot be suspended is not left running in the background.
    case freezeFailed(String)
    /// A scheduled task was not completed within its runtime and the grace period after its expiration (SPEC SCH-3).
    case taskOverrun(identifier: String, seconds: Double)
    /// A remote-notification handler did not complete within its time (SPEC NT-4).
    case remoteNotificationOverrun(seconds: Double)
    /// It used more memory than its manifest's limit (`MemoryLimitMB`, SPEC MEM-2): the kernel's memory controller
    /// ended it (its group counted an out-of-memory kill), or, where there is none, the daemon did on reading it.
    case memoryLimitExceeded(megabytes: Int)
    /// Out of front, it used more memory than the smaller limit the device gives apps there (`memory.backgroundLimitMB`,
    /// SPEC MEM-2), as iOS ends a background app over its background limit.
    case backgroundMemoryLimitExceeded(megabytes: Int)
    /// Memory stayed short after the warnings, and the app was the first of the order apps are ended in (SPEC MEM-1):
    /// its band, its memory at the latest reading (nil if none was had) and the pressure.
    case memoryPressure(pressure: MemoryPressure, band: MemoryBand, megabytes: Int?)

    public var description: String {
        switch self {
        case .exitsOnSuspend: "exits on suspend: left the foreground"
        case .forceQuit: "force-quit by the user"
        case .multitaskingOff: "multitasking turned off: no app stays in the background"
        case .uninstalled: "uninstalled"
        case .upgraded: "upgraded to a new version"
        case .shutdown: "daemon shutdown"
        case .launchFailed(let why): "could not be launched: \(why)"
        case .launchTimeout(let seconds):
            "did-finish-launching did not return within \(format(seconds)) s"
        case .callbackTimeout(let callback, let seconds):
            "\(callback) did not return within \(format(seconds)) s"
        case .backgroundTaskOverrun(let tasks, let seconds):
            "background time exhausted: task \(tasks.map { "'\($0)'" }.joined(separator: ", ")) "
                + "still open after \(format(seconds)) s"
        case .didNotReattach(let seconds): "did not reattach within \(format(seconds)) s of a daemon restart"
        case .freezeFailed(let why): "could not be suspended: \(why)"
        case .taskOverrun(let identifier, let seconds):
            "task '\(identifier)' not completed within \(format(seconds)) s (runtime and grace after expiration)"
        case .remoteNotificationOverrun(let seconds):
            "remote-notification handler not completed within \(format(seconds)) s"
        case .memoryLimitExceeded(let megabytes): "exceeded its memory limit of \(megabytes) MB"
        case .backgroundMemoryLimitExceeded(let megabytes): "exceeded its background memory limit of \(megabytes) MB"
        case .memoryPressure(let pressure, let band, let megabytes):
            "ended for memory (pressure \(pressure.rawValue)): \(band.rawValue)\(megabytes.map { ", \($0) MB" } ?? "")"
        }
    }
}

/// The record of an app's last termination: when, why and how the process ended.
public struct TerminationRecord: Hashable, Sendable, Codable {
    /// When the process ended.
    public var at: Instant
    /// Why the system ended it, or nil when the app ended on its own.
    public var reason: TerminationReason?
    /// How the process ended.
    public var status: ExitStatus

    /// Creates a record.
    public init(at: Instant, reason: TerminationReason?, status: ExitStatus) {
        self.at = at
        self.reason = reason
        self.status = status
    }

    /// One line for people.
    public var summary: String {
        if let reason { return "\(reason.isWatchdog ? "watchdog: " : "")\(reason) (\(status))" }
        return status.isAbnormal ? "crashed: \(status)" : status.description
    }
}

/// Seconds for people: to a tenth, without ".0"; any Double, a caller's 1e308 or NaN too, prints without trapping.
func format(_ seconds: Double) -> String {
    let rounded = (seconds * 10).rounded() / 10
    guard rounded.isFinite, abs(rounded) < 1e15 else { return String(seconds) }
    return rounded == rounded.rounded() ? String(Int64(rounded)) : String(rounded)
}
