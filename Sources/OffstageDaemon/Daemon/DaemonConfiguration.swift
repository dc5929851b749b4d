import Foundation
import OffstageCore

/// Everything `offstaged` is started with: where it keeps its state, where it listens, and every number
/// (the core's and its own). A configuration file is a JSON object with any subset of the keys of
/// ``CoreConfiguration`` and of ``DaemonSettings``; unknown keys are refused so a typo is not silently ignored.
public struct DaemonConfiguration: Sendable {
    /// The state folder: the store, installed bundles, app data and app output.
    public var stateDirectory: String
    /// The Unix socket to listen on.
    public var socketPath: String
    /// The core's numbers.
    public var core: CoreConfiguration
    /// The daemon's own numbers.
    public var daemon: DaemonSettings

    /// Creates a configuration.
    public init(stateDirectory: String, socketPath: String, core: CoreConfiguration = .init(), daemon: DaemonSettings = .init()) {
        self.stateDirectory = stateDirectory
        self.socketPath = socketPath
        self.core = core
        self.daemon = daemon
    }

    /// Reads a configuration file's settings.
    public static func settings(fromFile path: String) throws(ConfigurationError) -> (CoreConfiguration, DaemonSettings) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(path: path, key: nil, problem: "cannot be read", fix: "check that the file exists and is readable")
        }
        return try settings(from: data, file: path)
    }

    /// Parses configuration settings from JSON bytes.
    public static func settings(from data: Data, file: String) throws(ConfigurationError) -> (CoreConfiguration, DaemonSettings) {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ConfigurationError(path: file, key: nil, problem: "is not a JSON object", fix: "write {\"suspendDelay\": 1, …}")
        }
        let known = Set(CoreConfiguration.CodingKeys.allCases.map(\.rawValue) + DaemonSettings.CodingKeys.allCases.map(\.rawValue))
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw ConfigurationError(
                path: file, key: unknown, problem: "is not a setting",
                fix: "use only: \(known.sorted().joined(separator: ", "))")
        }
        do {
            let decoder = JSONDecoder()
            return (try decoder.decode(CoreConfiguration.self, from: data), try decoder.decode(DaemonSettings.self, from: data))
        } catch let DecodingError.dataCorrupted(context) {
            // A knob of a setting that is an object is named with its object: `policy.resumeThreshold`.
            let key = context.codingPath.isEmpty ? nil : context.codingPath.map(\.stringValue).joined(separator: ".")
            let fix =
                switch key {
                case "freezer": "use auto, cgroupV2, cgroupV1 or signalStop"
                case "metricsListen": DaemonSettings.metricsListenFix
                case let knob? where knob.hasPrefix("policy."):
                    "give the policy's knobs as numbers within their ranges, or leave them out (the README lists each with its default)"
                default: "correct the value (the README lists every setting)"
                }
            throw ConfigurationError(path: file, key: key, problem: context.debugDescription, fix: fix)
        } catch let DecodingError.typeMismatch(_, context) {
            let key = context.codingPath.last?.stringValue
            let fix =
                switch key {
                case "metricsListen": DaemonSettings.metricsListenFix
                case "desktopNotifications": "give true or false"
                default: "give a number (seconds) or the documented value"
                }
            throw ConfigurationError(path: file, key: key, problem: "has the wrong type", fix: fix)
        } catch {
            throw ConfigurationError(path: file, key: nil, problem: "\(error)", fix: "correct the file")
        }
    }
}

/// The daemon's own numbers and choices.
public struct DaemonSettings: Hashable, Sendable, Codable {
    /// Rows of the event log kept. Default 100,000.
    public var eventLogCapacity: Int = 100_000
    /// A freeze that is not confirmed within this many seconds is undone and reported. Default 0.1 s.
    public var freezeTimeout: Double = 0.1
    /// Longest Varlink message accepted, in bytes. Default 1 MiB.
    public var maximumMessageSize: Int = 1 << 20
    /// The freezer: `auto` (cgroup v2, then v1, then SIGSTOP), or one of `cgroupV2`, `cgroupV1`, `signalStop`.
    public var freezer: String = "auto"
    /// How long a graceful stop waits for apps to exit before the daemon quits anyway. Default 10 s.
    public var shutdownTimeout: Double = 10
    /// Where to serve `GET /metrics` over HTTP, as `HOST:PORT` (e.g. `127.0.0.1:9464`); nil (the default) serves
    /// none. `offstage metrics` works either way.
    public var metricsListen: String?
    /// The one timer firing later than this many seconds after its deadline counts as a missed deadline
    /// (`offstage_deadlines_missed_total`; SPEC §11: due work starts ≤ 1 ms late). Default 0.001 s.
    public var deadlineTolerance: Double = 0.001
    /// The location sources' numbers (SPEC MODE-3), as an object under `location`: `{"location": {"gpsdPort": 2948}}`.
    /// Defaults: those of ``LocationSourceSettings``.
    public var location = LocationSourceSettings()
    /// Whether delivered notifications are shown on the desktop session's notification service (SPEC NT-2), when the
    /// daemon has one (`DBUS_SESSION_BUS_ADDRESS`). Off, they only go to the daemon's delivered list. Default on.
    public var desktopNotifications = true
    /// Seconds a notification stays on the desktop before it hides it; 0 keeps it until the user acts; nil (the
    /// default) lets the desktop decide.
    public var desktopNotificationTimeout: Double?
    /// The push gateway inside the daemon (SPEC NT-3), as an object under `push`:
    /// `{"push": {"listen": "0.0.0.0:2197", "tlsCertificate": "/etc/offstage/push.pem", "tlsKey": "…"}}`.
    /// Defaults: those of ``PushGatewaySettings`` (on, loopback, a free port, h2c).
    public var push = PushGatewaySettings()
    /// A background transfer's progress is journaled after each this many bytes (SPEC TR-6: after a crash at most
    /// this much is fetched again). Default 1 MiB.
    public var transferCheckpointBytes: Int64 = 1 << 20
    /// How memory pressure and the thermal state are read and graded (SPEC MEM-1, SCH-11), as an object under
    /// `machinePressure`: `{"machinePressure": {"pollInterval": 5, "psiFullCritical": 10}}`. Defaults: those of
    /// ``MachinePressureSettings``.
    public var machinePressure = MachinePressureSettings()
    /// Seconds the history of scheduled work (`offstage explain --history`, SPEC SCH-8) is kept. Default 7 days.
    public var historyMaxAge: Double = 7 * 86_400
    /// Rows of that history kept per app, for its waits and for its runs each. Default 5,000.
    public var historyRowsPerApp: Int = 5_000
    /// The scheduling policy's knobs (SPEC SCH-5, SCH-7), as an object under `policy` with any subset of
    /// ``AdaptivePolicy``'s: `{"policy": {"resumeThreshold": 0.6}}`. Defaults: those of ``AdaptivePolicy``.
    public var policy = AdaptivePolicy()
    /// Whether the user's data controls are enforced by the kernel with nftables rules on the apps' sockets, and
    /// their bytes counted (SPEC SET-2, SET-3). Off, the controls hold only the scheduler and the transfers. Default on.
    public var dataControls = true
    /// Whether the apps' memory limits (SPEC MEM-2) are enforced, and their memory measured, by the kernel's memory
    /// controller where one can be used. Off, or where none can, the daemon reads each limited app's memory itself every
    /// ``memoryWatchInterval`` while it runs, and `offstage status` says which is in force. Default on.
    public var memoryController = true
    /// Seconds between two readings of a running limited app's memory where the daemon watches the limits itself.
    /// Default 1 s.
    public var memoryWatchInterval: Double = 1
    /// The app memory budget in MiB (SPEC MEM-1): a limit on the memory group holding every app's, so that the apps
    /// have a device's memory on a bigger machine. Memory pressure then also follows how full it is
    /// (``MachinePressureSettings/budgetWarning``, ``MachinePressureSettings/budgetCritical``). Needs the memory
    /// controller. Default none.
    public var memoryBudgetMB: Int?
    /// Whether the network's metered hint is read from NetworkManager on the system bus (SPEC SET-1). Default on.
    public var networkManager = true
    /// Days of per-app usage kept (`offstage usage`, SPEC SET-3), today included. Default 31.
    public var usageDaysKept: Int = 31
    /// Seconds between two writes of the usage counted to the store: a daemon killed with -9 loses at most this much
    /// of it. Default 60.
    public var usageWriteInterval: Double = 60

    /// The defaults.
    public init() {}

    /// Keys a configuration file may contain.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case eventLogCapacity, freezeTimeout, maximumMessageSize, freezer, shutdownTimeout, metricsListen
        case deadlineTolerance, location, desktopNotifications, desktopNotificationTimeout, push, transferCheckpointBytes
        case machinePressure, historyMaxAge, historyRowsPerApp, policy, usageDaysKept, usageWriteInterval, networkManager
        case dataControls, memoryController, memoryWatchInterval, memoryBudgetMB
    }

    /// How the usage recorder keeps what it counts.
    var usage: UsageRecorder.Settings {
        UsageRecorder.Settings(daysKept: usageDaysKept, writeInterval: usageWriteInterval)
    }

    /// The history's bounds in the store.
    var historyBounds: OffstageStore.HistoryBounds {
        OffstageStore.HistoryBounds(maximumAge: historyMaxAge, rowsPerApp: historyRowsPerApp)
    }

    /// ``desktopNotificationTimeout`` as the desktop takes it: milliseconds, -1 for the desktop's choice.
    var desktopNotificationExpireTimeout: Int32 {
        desktopNotificationTimeout.map { Int32(($0 * 1000).rounded()) } ?? -1
    }

    /// The longest ``desktopNotificationTimeout``: milliseconds in a 32-bit integer.
    static let maximumDesktopNotificationTimeout = Double(Int32.max / 1000)

    /// The fix a bad `metricsListen` gets.
    static let metricsListenFix =
        "give HOST:PORT with a port from 1 to 65535, e.g. \"127.0.0.1:9464\", or leave the key out"

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = DaemonSettings()
        // Every number through the checked conversions, with a range: a shutdown timeout of 1e300 s trapped at the
        // first shutdown (its conversion to nanoseconds), and counts had no upper bound at all.
        func seconds(_ key: CodingKeys, _ fallback: Double, in range: ClosedRange<Double>) throws -> Double {
            try container.decodeNumberIfPresent(forKey: key, in: range, unit: "seconds") ?? fallback
        }
        func count<T: FixedWidthInteger & Decodable>(_ key: CodingKeys, _ fallback: T, in range: ClosedRange<T>) throws -> T {
            try container.decodeIntegerIfPresent(T.self, forKey: key, in: range) ?? fallback
        }
        let longest = CheckedNumber.longestDuration
        eventLogCapacity = try count(.eventLogCapacity, defaults.eventLogCapacity, in: 100 ... 10_000_000)
        freezeTimeout = try seconds(.freezeTimeout, defaults.freezeTimeout, in: 0.001 ... 3_600)
        maximumMessageSize = try count(.maximumMessageSize, defaults.maximumMessageSize, in: 4_096 ... 1 << 30)
        freezer = try container.decodeIfPresent(String.self, forKey: .freezer) ?? defaults.freezer
        shutdownTimeout = try seconds(.shutdownTimeout, defaults.shutdownTimeout, in: 0 ... 3_600)
        metricsListen = try container.decodeIfPresent(String.self, forKey: .metricsListen)
        deadlineTolerance = try seconds(.deadlineTolerance, defaults.deadlineTolerance, in: 0 ... 3_600)
        location = try container.decodeIfPresent(LocationSourceSettings.self, forKey: .location) ?? defaults.location
        push = try container.decodeIfPresent(PushGatewaySettings.self, forKey: .push) ?? defaults.push
        machinePressure =
            try container.decodeIfPresent(MachinePressureSettings.self, forKey: .machinePressure) ?? defaults.machinePressure
        transferCheckpointBytes =
            try container.decodeIfPresent(Int64.self, forKey: .transferCheckpointBytes) ?? defaults.transferCheckpointBytes
        guard (4_096...(1 << 30)).contains(transferCheckpointBytes) else {
            throw DecodingError.dataCorruptedError(
                forKey: .transferCheckpointBytes, in: container, debugDescription: "must be from 4096 to 1073741824 bytes")
        }
        if let problem = push.problems.first {
            throw DecodingError.dataCorruptedError(forKey: .push, in: container, debugDescription: problem)
        }
        desktopNotifications =
            try container.decodeIfPresent(Bool.self, forKey: .desktopNotifications) ?? defaults.desktopNotifications
        desktopNotificationTimeout = try container.decodeIfPresent(Double.self, forKey: .desktopNotificationTimeout)
        if let timeout = desktopNotificationTimeout, !(0...Self.maximumDesktopNotificationTimeout).contains(timeout) {
            throw DecodingError.dataCorruptedError(
                forKey: .desktopNotificationTimeout, in: container,
                debugDescription: "must be from 0 to \(Int(Self.maximumDesktopNotificationTimeout)) seconds")
        }
        if let problem = location.problems.first {
            throw DecodingError.dataCorruptedError(forKey: .location, in: container, debugDescription: problem)
        }
        if let metricsListen, MetricsListenAddress(metricsListen) == nil {
            throw DecodingError.dataCorruptedError(
                forKey: .metricsListen, in: container, debugDescription: "cannot be \(QuotedText.quote(metricsListen))")
        }
        guard ["auto", "cgroupV2", "cgroupV1", "signalStop"].contains(freezer) else {
            throw DecodingError.dataCorruptedError(
                forKey: .freezer, in: container, debugDescription: "cannot be \(QuotedText.quote(freezer))")
        }
        policy = try container.decodeIfPresent(AdaptivePolicy.self, forKey: .policy) ?? defaults.policy
        historyMaxAge = try seconds(.historyMaxAge, defaults.historyMaxAge, in: 60 ... longest)
        historyRowsPerApp = try count(.historyRowsPerApp, defaults.historyRowsPerApp, in: 10 ... 10_000_000)
        networkManager = try container.decodeIfPresent(Bool.self, forKey: .networkManager) ?? defaults.networkManager
        dataControls = try container.decodeIfPresent(Bool.self, forKey: .dataControls) ?? defaults.dataControls
        memoryController = try container.decodeIfPresent(Bool.self, forKey: .memoryController) ?? defaults.memoryController
        memoryWatchInterval = try seconds(.memoryWatchInterval, defaults.memoryWatchInterval, in: 0.1 ... 3_600)
        memoryBudgetMB = try container.decodeIntegerIfPresent(Int.self, forKey: .memoryBudgetMB, in: 16 ... 1_048_576)
        usageDaysKept = try count(.usageDaysKept, defaults.usageDaysKept, in: 1 ... 3_660)
        usageWriteInterval = try seconds(.usageWriteInterval, defaults.usageWriteInterval, in: 0 ... 3_600)
    }
}

/// A configuration file that cannot be used: the file, the key, the problem and the fix.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// The key, if one is at fault.
    public var key: String?
    /// What is wrong.
    public var problem: String
    /// What to do.
    public var fix: String

    public var description: String {
        if let key { return "\(path): key '\(key)' \(problem); \(fix)" }
        return "\(path) \(problem); \(fix)"
    }
}

/// The folders inside the state directory.
public struct DaemonPaths: Sendable {
    /// The state directory.
    public let root: String

    /// Paths under `root`.
    public init(root: String) { self.root = root }

    /// The SQLite store.
    public var store: String { root + "/offstage.sqlite" }
    /// Installed bundles, one folder per app.
    public var bundles: String { root + "/bundles" }
    /// Each app's data folder (its durable store lives there).
    public func data(_ id: AppID) -> String { root + "/data/" + id.rawValue }
    /// Each app's stdout and stderr.
    public func output(_ id: AppID) -> String { root + "/logs/" + id.rawValue + ".log" }
}

/// A `metricsListen` value: `HOST:PORT`, where HOST is an IPv4 address, a name such as `localhost`, or an IPv6
/// address in brackets (`[::1]:9464`), and PORT is 1 to 65535.
public struct MetricsListenAddress: Hashable, Sendable {
    /// The host to bind (brackets removed).
    public var host: String
    /// The TCP port.
    public var port: Int

    /// An address from its parts, unchecked.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `text`, or nil when it is not `HOST:PORT` with a usable port (port 0, any free port, only with
    /// `allowingAnyPort`).
    public init?(_ text: String, allowingAnyPort: Bool = false) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        guard let port = Int(text[text.index(after: colon)...]), ((allowingAnyPort ? 0 : 1)...65535).contains(port)
        else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            guard host.contains(":") else { return nil }
        } else if host.contains(":") {
            // An IPv6 address needs its brackets, or the port could not be told from the address.
            return nil
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:%")
        guard !host.isEmpty, host.allSatisfy({ allowed.contains($0) }) else { return nil }
        self.host = host
        self.port = port
    }
}
