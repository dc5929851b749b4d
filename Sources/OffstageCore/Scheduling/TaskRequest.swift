/// What kind of background work a request asks for (SPEC SCH-2, SCH-4).
public enum TaskKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// A short app refresh (`BGAppRefreshTaskRequest`): about 30 s, needs the `fetch` mode.
    case appRefresh = "refresh"
    /// A deferrable processing task (`BGProcessingTaskRequest`): minutes, only while the device is idle, needs the
    /// `processing` mode.
    case processing
    /// The legacy background fetch (`setMinimumBackgroundFetchInterval`), needs the `fetch` mode.
    case fetch
    /// Work the user started in the foreground that continues in the background with reported progress
    /// (`BGContinuedProcessingTaskRequest`, SPEC SCH-11). It needs no background mode.
    case continued

    /// The background mode an app must declare to use this kind (SPEC MAN-4); nil when it needs none.
    public var requiredMode: BackgroundMode? {
        switch self {
        case .appRefresh, .fetch: .fetch
        case .processing: .processing
        case .continued: nil
        }
    }

    /// Why the app is launched to run it (SPEC LC-2).
    public var launchReason: LaunchReason {
        switch self {
        case .appRefresh: .refresh
        case .processing: .processing
        case .fetch: .fetch
        case .continued: .continuedProcessing
        }
    }
}

/// A pending request for background work, as the app submitted it (SPEC SCH-2).
public struct TaskRequest: Hashable, Sendable, Codable {
    /// The identifier the app registered a handler for; ``fetchIdentifier`` for the legacy fetch.
    public var identifier: String
    /// Refresh, processing or fetch.
    public var kind: TaskKind
    /// Not before this instant; nil for as soon as the system sees fit.
    public var earliestBegin: Instant?
    /// Needs a network. App refreshes and fetches always do (they exist to download content); a processing
    /// request says so itself.
    public var requiresNetwork: Bool
    /// Needs external power (processing only).
    public var requiresExternalPower: Bool
    /// When the app submitted it.
    public var submittedAt: Instant
    /// Title, subtitle and strategy of a continued-processing request; nil for every other kind.
    public var continued: ContinuedTaskDetails?

    /// The identifier under which the legacy background fetch is shown and explained. It is reserved: a manifest
    /// may not list it in `BGTaskSchedulerPermittedIdentifiers`.
    public static let fetchIdentifier = "fetch"

    /// Creates a request.
    public init(
        identifier: String, kind: TaskKind, earliestBegin: Instant? = nil, requiresNetwork: Bool? = nil,
        requiresExternalPower: Bool = false, submittedAt: Instant, continued: ContinuedTaskDetails? = nil
    ) {
        self.identifier = identifier
        self.kind = kind
        self.earliestBegin = earliestBegin
        self.requiresNetwork = requiresNetwork ?? (kind == .appRefresh || kind == .fetch)
        self.requiresExternalPower = kind == .processing && requiresExternalPower
        self.submittedAt = submittedAt
        self.continued = kind == .continued ? continued ?? ContinuedTaskDetails(title: identifier) : nil
    }
}

/// How a task's handler ended (SPEC SCH-3, SCH-4). The policy learns from it (SPEC SCH-5).
public enum TaskResult: String, Hashable, Sendable, Codable, CaseIterable {
    /// New content was downloaded (`setTaskCompleted(success: true)`, or fetch `.newData`).
    case newData
    /// The content was checked and nothing was new (fetch `.noData`).
    case noData
    /// The work failed (`setTaskCompleted(success: false)`, fetch `.failed`, expired, or the app died).
    case failed

    /// Whether the app's content is up to date after this result.
    public var refreshedContent: Bool { self != .failed }
}

/// The legacy fetch interval (`setMinimumBackgroundFetchInterval`, SPEC SCH-4).
public enum FetchInterval: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Never fetch (the default).
    case never
    /// As often as the system allows (`UIApplication.backgroundFetchIntervalMinimum`).
    case minimum
    /// At most once per this many seconds.
    case seconds(Double)

    public var description: String {
        switch self {
        case .never: "never"
        case .minimum: "minimum"
        case .seconds(let seconds): "\(format(seconds)) s"
        }
    }
}
