/// What the transfer queue asks the shell to do (SPEC §5). Journal writes come before the action they make safe:
/// a task is saved `running` before it is started, and `completed` before its file is handed over.
public enum TransferAction: Hashable, Sendable {
    /// Write the task's row (created, or its state, bytes, validator or retry changed).
    case save(TransferTask)
    /// Remove the task's row, its part file, and a handed-over file the app left where it was given.
    case delete(TransferTask)
    /// Write the session's row.
    case saveSession(TransferSession)
    /// Remove the session's row.
    case deleteSession(TransferSessionKey)
    /// Write how often the app was launched for its transfers.
    case saveRelaunches(AppID, TransferRelaunches)
    /// Start attempt `task.attempt` of the task, resuming from `task.bytesDone` against `task.validator`; report its
    /// progress and end with ``OffstageCore/transferProgress(_:attempt:bytesDone:bytesExpected:validator:restarted:at:)``
    /// and ``OffstageCore/transferEnded(_:attempt:_:at:)``.
    case start(TransferTask)
    /// Stop attempt `attempt` of the task (it is held back, paused or cancelled); report its end as cancelled.
    case stop(id: UInt64, attempt: UInt64)
    /// The download completed and is saved so: move its part file into the app's folder under its file name.
    case handOver(TransferTask)
}

/// The numbers the transfer queue decides with (settings, SPEC TR-4, TR-5; decision 0037).
public struct TransferLimits: Hashable, Sendable, Codable {
    /// Transfers running at once on the device. Default 6.
    public var maximumRunning: Int = 6
    /// Transfers of one app running at once. Default 4.
    public var maximumRunningPerApp: Int = 4
    /// Wait after the first transient failure; it doubles with each failure in a row. Default 5 s.
    public var retryDelay: Double = 5
    /// The longest wait between attempts. Default 900 s.
    public var maximumRetryDelay: Double = 900
    /// A task with no byte moved for this long fails as timed out (the platform's resource timeout). Default 7 days.
    public var resourceTimeout: Double = 604_800
    /// Wait before the second launch of an app for its transfers; it doubles with each launch until the user opens
    /// the app. Default 30 s.
    public var relaunchDelay: Double = 30
    /// The longest such wait. Default 3,600 s.
    public var maximumRelaunchDelay: Double = 3_600
    /// The app's handler of a session's events has this long to call its completion handler. Default 30 s.
    public var eventsHandlerTime: Double = 30
    /// Tasks one app may have unfinished. Default 1,000.
    public var maximumTasksPerApp: Int = 1_000
    /// The most of an upload's response body kept for the app (decision 0041); a longer body is cut here and the
    /// task says so. From 0 (keep none) to 1 MiB. Default 64 KiB.
    public var maximumResponseBodyBytes: Int = 65_536
    /// The most headers one task may set. Default 64.
    public var maximumHeaders: Int = 64
    /// The most bytes of all a task's header names and values together. Default 16 KiB (servers such as nginx refuse
    /// a request whose header lines pass 8 KiB each by default; a task that cannot be sent is refused when created).
    public var maximumHeaderBytes: Int = 16_384

    /// The defaults.
    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = TransferLimits()
        func seconds(_ key: CodingKeys, _ fallback: Double) throws -> Double {
            try container.decodeNumberIfPresent(forKey: key, in: 0 ... CheckedNumber.longestDuration, unit: "seconds") ?? fallback
        }
        func count(_ key: CodingKeys, _ fallback: Int) throws -> Int {
            guard let value = try container.decodeIfPresent(Int.self, forKey: key) else { return fallback }
            guard (1...100_000).contains(value) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must be between 1 and 100000")
            }
            return value
        }
        maximumRunning = try count(.maximumRunning, defaults.maximumRunning)
        maximumRunningPerApp = try count(.maximumRunningPerApp, defaults.maximumRunningPerApp)
        maximumTasksPerApp = try count(.maximumTasksPerApp, defaults.maximumTasksPerApp)
        maximumHeaders = try count(.maximumHeaders, defaults.maximumHeaders)
        maximumHeaderBytes = try count(.maximumHeaderBytes, defaults.maximumHeaderBytes)
        if let bytes = try container.decodeIfPresent(Int.self, forKey: .maximumResponseBodyBytes) {
            guard (0...1_048_576).contains(bytes) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .maximumResponseBodyBytes, in: container,
                    debugDescription: "must be from 0 to 1048576 bytes (the most of an upload's response body kept for the app; default 65536)")
            }
            maximumResponseBodyBytes = bytes
        }
        retryDelay = try seconds(.retryDelay, defaults.retryDelay)
        maximumRetryDelay = try seconds(.maximumRetryDelay, defaults.maximumRetryDelay)
        resourceTimeout = try seconds(.resourceTimeout, defaults.resourceTimeout)
        relaunchDelay = try seconds(.relaunchDelay, defaults.relaunchDelay)
        maximumRelaunchDelay = try seconds(.maximumRelaunchDelay, defaults.maximumRelaunchDelay)
        eventsHandlerTime = try seconds(.eventsHandlerTime, defaults.eventsHandlerTime)
    }

    /// The wait after `failures` transient failures in a row: `retryDelay` doubling, at most `maximumRetryDelay`, and
    /// never shorter than what the server asked (`Retry-After`).
    public func retryWait(failures: Int, serverAsked: Double?) -> Double {
        let backoff = min(retryDelay * Double(1 << min(max(failures - 1, 0), 30)), maximumRetryDelay)
        return max(backoff, serverAsked ?? 0)
    }
}
