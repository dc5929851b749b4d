/// Every number the core decides with, each with its documented default (SPEC: "numbers are settings").
///
/// Durations are written in seconds so a configuration file reads naturally. A configuration file may give any
/// subset of the keys; the rest keep their defaults.
public struct CoreConfiguration: Hashable, Sendable, Codable {
    /// Spawn until did-finish-launching returns (SPEC LC-3). Default 20 s.
    public var launchTimeout: Double = 20
    /// did-enter-background must return within this (SPEC LC-3). Default 5 s.
    public var didEnterBackgroundTimeout: Double = 5
    /// will-terminate must return and the process exit within this (SPEC LC-3, LC-7). Default 5 s.
    public var willTerminateTimeout: Double = 5
    /// Every other lifecycle callback must return within this. Default 5 s.
    public var callbackTimeout: Double = 5
    /// An idle app in the background is suspended this long after it became idle (SPEC LC-4). Default 1 s.
    public var suspendDelay: Double = 1
    /// After SIGTERM, SIGKILL follows this much later. Default 2 s.
    public var terminationGrace: Double = 2
    /// An app still alive after a daemon restart must reattach within this. Default 20 s.
    public var reattachTimeout: Double = 20
    /// Background time shared by an app's background tasks, fresh each time it enters the background (SPEC BT-3).
    /// Default 30 s.
    public var backgroundTaskBudget: Double = 30
    /// Expiration handlers run this long before the budget ends (SPEC BT-4). Default 5 s.
    public var expirationWarning: Double = 5
    /// First delay before relaunching an app that crashed in the background (SPEC LC-9). Default 1 s.
    public var crashLoopInitialDelay: Double = 1
    /// Longest such delay; the delay doubles with each crash up to this. Default 300 s.
    public var crashLoopMaxDelay: Double = 300
    /// A background run this long without crashing resets the crash count. Default 600 s.
    public var crashLoopResetAfter: Double = 600
    /// Runtime of an app refresh or a legacy fetch before its expiration handler runs (SPEC SCH-2, SCH-4).
    /// Default 30 s.
    public var refreshRuntime: Double = 30
    /// Runtime of a processing task (SPEC SCH-2: minutes). Default 300 s.
    public var processingRuntime: Double = 300
    /// After a task's expiration handler runs, the app has this long to complete it before it is terminated
    /// (SPEC SCH-3). Default 5 s.
    public var taskExpirationGrace: Double = 5
    /// Pending processing requests per app (SPEC SCH-2). Default 10.
    public var maxProcessingRequests: Int = 10
    /// On battery below this charge, in percent, background work waits for a charger (SPEC SCH-6). Default 20.
    public var minimumBatteryLevel: Int = 20
    /// Background runtime per app per day on battery (SPEC SCH-6). Default 1,800 s.
    public var dailyBackgroundBudget: Double = 1_800
    /// Locked this long, the device counts as idle (processing runs only then, SPEC SCH-2). Default 1,800 s.
    public var idleDelay: Double = 1_800
    /// What the legacy fetch's `minimum` interval means (SPEC SCH-4). Default 900 s.
    public var minimumFetchInterval: Double = 900
    /// Half-life of usage history, in days: older opens weigh less (SPEC SCH-5). Default 7.
    public var usageHalfLifeDays: Double = 7
    /// An earliest begin date may lie at most this far ahead (SPEC SCH-2 bad input). Default 604,800 s (7 days).
    public var maximumEarliestBeginAhead: Double = 604_800
    /// An earliest begin date this far in the past is refused as a mistake; a nearer past date means "now".
    /// Default 86,400 s (a day).
    public var maximumEarliestBeginPast: Double = 86_400
    /// The shortest VoIP keep-alive timeout an app may set (SPEC MODE-2). Default 600 s.
    public var keepAliveMinimumTimeout: Double = 600
    /// A keep-alive handler must return within this, or the app is terminated (SPEC MODE-2). Default 30 s.
    public var keepAliveHandlerTime: Double = 30
    /// A keep-alive handler may run this long before its timeout expires, to join a wake-up that happens anyway
    /// (SPEC SCH-7). Default 120 s.
    public var keepAliveTolerance: Double = 120
    /// An app woken by data on its VoIP socket has this long to handle it (SPEC MODE-2). Default 10 s.
    public var voipSocketEventTime: Double = 10
    /// An app woken (or launched) because its accessory connected, disconnected or sent data has this long to handle
    /// it; a background task buys more (SPEC MODE-4). Default 10 s.
    public var accessoryEventTime: Double = 10
    /// The most accessories one app may register (SPEC MODE-4). Default 8.
    public var maximumAccessoriesPerApp: Int = 8
    /// The significant-change location service wakes or launches an app once the device is this many metres from
    /// where the app last heard of it (SPEC MODE-3: about 500 m). Default 500 m.
    public var significantChangeDistance: Double = 500
    /// Pending local notifications per app; over it the soonest are kept and the app is told (SPEC NT-1). Default 128.
    public var maximumPendingNotificationsPerApp: Int = 128
    /// Delivered notifications kept per app, newest kept (SPEC NT-2). Default 64.
    public var maximumDeliveredNotificationsPerApp: Int = 64
    /// Bytes of text in one notification's content (title, body, user info …), as APNs limits its payload. Default 4,096.
    public var maximumNotificationContentBytes: Int = 4_096
    /// The shortest repeating time-interval trigger (SPEC NT-1). Default 60 s.
    public var minimumNotificationRepeatInterval: Double = 60
    /// A notification delivered more than this after its due time (the daemon was down) is marked late. Default 1 s.
    public var notificationLateAfter: Double = 1
    /// Background pushes an app may be woken for, regained per hour (SPEC NT-4; the platform's advice is two or three
    /// an hour). Default 3.
    public var backgroundPushesPerHour: Double = 3
    /// Background pushes an app may be woken for in a row before the hourly rate applies. Default 3.
    public var backgroundPushBurst: Int = 3
    /// An app's remote-notification handler has this long to complete, then the app is terminated (SPEC NT-4).
    /// Default 30 s.
    public var remoteNotificationTime: Double = 30
    /// A newsstand app (`newsstand-content`) is woken for a new issue's push at most once in this long (SPEC MODE-5;
    /// the platform's rule was once a day). Default 86,400 s.
    public var newsstandWakeInterval: Double = 86_400
    /// The device's offset from UTC in seconds, for hours of the day and daily budgets. Nil (the default) means the
    /// system's: the daemon reads it at start; the core and the simulator take nil as UTC.
    public var utcOffsetSeconds: Int?
    /// Background transfers: how many run at once, retries, relaunches (SPEC §5). A configuration file gives them as
    /// one object, `"transfers": {"maximumRunning": 6, …}`; keys left out keep their defaults.
    public var transfers = TransferLimits()
    /// Continued processing: slots, pressure, silence (SPEC SCH-11). A configuration file gives them as one object,
    /// `"continuedProcessing": {"slots": 2, …}`; keys left out keep their defaults.
    public var continuedProcessing = ContinuedProcessingLimits()
    /// The answer to memory pressure: warnings, grace, how often apps are ended (SPEC MEM-1). A configuration file
    /// gives them as one object, `"memory": {"warningGrace": 2, …}`; keys left out keep their defaults.
    public var memory = MemoryResponseSettings()

    /// The defaults.
    public init() {}

    /// Keys a configuration file may contain.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case launchTimeout, didEnterBackgroundTimeout, willTerminateTimeout, callbackTimeout, suspendDelay
        case terminationGrace, reattachTimeout, backgroundTaskBudget, expirationWarning
        case crashLoopInitialDelay, crashLoopMaxDelay, crashLoopResetAfter
        case refreshRuntime, processingRuntime, taskExpirationGrace, maxProcessingRequests, minimumBatteryLevel
        case dailyBackgroundBudget, idleDelay, minimumFetchInterval, usageHalfLifeDays, maximumEarliestBeginAhead
        case maximumEarliestBeginPast, utcOffsetSeconds
        case keepAliveMinimumTimeout, keepAliveHandlerTime, keepAliveTolerance, voipSocketEventTime
        case significantChangeDistance, accessoryEventTime, maximumAccessoriesPerApp
        case maximumPendingNotificationsPerApp, maximumDeliveredNotificationsPerApp, maximumNotificationContentBytes
        case minimumNotificationRepeatInterval, notificationLateAfter
        case backgroundPushesPerHour, backgroundPushBurst, remoteNotificationTime, newsstandWakeInterval
        case transfers, continuedProcessing, memory
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = CoreConfiguration()
        // Every number goes through the checked conversion: a timeout of 1e300 s would trap the first timer it set.
        func value(
            _ key: CodingKeys, _ fallback: Double, in range: ClosedRange<Double> = 0 ... CheckedNumber.longestDuration,
            unit: String = "seconds"
        ) throws -> Double {
            try container.decodeNumberIfPresent(forKey: key, in: range, unit: unit) ?? fallback
        }
        launchTimeout = try value(.launchTimeout, defaults.launchTimeout)
        didEnterBackgroundTimeout = try value(.didEnterBackgroundTimeout, defaults.didEnterBackgroundTimeout)
        willTerminateTimeout = try value(.willTerminateTimeout, defaults.willTerminateTimeout)
        callbackTimeout = try value(.callbackTimeout, defaults.callbackTimeout)
        suspendDelay = try value(.suspendDelay, defaults.suspendDelay)
        terminationGrace = try value(.terminationGrace, defaults.terminationGrace)
        reattachTimeout = try value(.reattachTimeout, defaults.reattachTimeout)
        backgroundTaskBudget = try value(.backgroundTaskBudget, defaults.backgroundTaskBudget)
        expirationWarning = try value(.expirationWarning, defaults.expirationWarning)
        crashLoopInitialDelay = try value(.crashLoopInitialDelay, defaults.crashLoopInitialDelay)
        crashLoopMaxDelay = try value(.crashLoopMaxDelay, defaults.crashLoopMaxDelay)
        crashLoopResetAfter = try value(.crashLoopResetAfter, defaults.crashLoopResetAfter)
        refreshRuntime = try value(.refreshRuntime, defaults.refreshRuntime)
        processingRuntime = try value(.processingRuntime, defaults.processingRuntime)
        taskExpirationGrace = try value(.taskExpirationGrace, defaults.taskExpirationGrace)
        dailyBackgroundBudget = try value(.dailyBackgroundBudget, defaults.dailyBackgroundBudget)
        idleDelay = try value(.idleDelay, defaults.idleDelay)
        minimumFetchInterval = try value(.minimumFetchInterval, defaults.minimumFetchInterval)
        usageHalfLifeDays = try value(.usageHalfLifeDays, defaults.usageHalfLifeDays, in: 0 ... 36_525, unit: "days")
        maximumEarliestBeginAhead = try value(.maximumEarliestBeginAhead, defaults.maximumEarliestBeginAhead)
        maximumEarliestBeginPast = try value(.maximumEarliestBeginPast, defaults.maximumEarliestBeginPast)
        keepAliveMinimumTimeout = try value(.keepAliveMinimumTimeout, defaults.keepAliveMinimumTimeout)
        keepAliveHandlerTime = try value(.keepAliveHandlerTime, defaults.keepAliveHandlerTime)
        keepAliveTolerance = try value(.keepAliveTolerance, defaults.keepAliveTolerance)
        voipSocketEventTime = try value(.voipSocketEventTime, defaults.voipSocketEventTime)
        significantChangeDistance = try value(
            .significantChangeDistance, defaults.significantChangeDistance, in: 0 ... 40_075_000, unit: "metres")
        accessoryEventTime = try value(.accessoryEventTime, defaults.accessoryEventTime)
        minimumNotificationRepeatInterval = try value(
            .minimumNotificationRepeatInterval, defaults.minimumNotificationRepeatInterval)
        notificationLateAfter = try value(.notificationLateAfter, defaults.notificationLateAfter)
        backgroundPushesPerHour = try value(
            .backgroundPushesPerHour, defaults.backgroundPushesPerHour, in: 0 ... 1_000_000, unit: "wakes per hour")
        remoteNotificationTime = try value(.remoteNotificationTime, defaults.remoteNotificationTime)
        newsstandWakeInterval = try value(.newsstandWakeInterval, defaults.newsstandWakeInterval)
        func integer(_ key: CodingKeys, _ fallback: Int, in range: ClosedRange<Int>) throws -> Int {
            guard let value = try container.decodeIfPresent(Int.self, forKey: key) else { return fallback }
            guard range.contains(value) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "must be between \(range.lowerBound) and \(range.upperBound)")
            }
            return value
        }
        maxProcessingRequests = try integer(.maxProcessingRequests, defaults.maxProcessingRequests, in: 0...10_000)
        minimumBatteryLevel = try integer(.minimumBatteryLevel, defaults.minimumBatteryLevel, in: 0...100)
        maximumAccessoriesPerApp = try integer(.maximumAccessoriesPerApp, defaults.maximumAccessoriesPerApp, in: 0...256)
        maximumPendingNotificationsPerApp = try integer(
            .maximumPendingNotificationsPerApp, defaults.maximumPendingNotificationsPerApp, in: 1...100_000)
        maximumDeliveredNotificationsPerApp = try integer(
            .maximumDeliveredNotificationsPerApp, defaults.maximumDeliveredNotificationsPerApp, in: 1...10_000)
        backgroundPushBurst = try integer(.backgroundPushBurst, defaults.backgroundPushBurst, in: 0...10_000)
        maximumNotificationContentBytes = try integer(
            .maximumNotificationContentBytes, defaults.maximumNotificationContentBytes, in: 256...1_048_576)
        transfers = try container.decodeIfPresent(TransferLimits.self, forKey: .transfers) ?? defaults.transfers
        continuedProcessing =
            try container.decodeIfPresent(ContinuedProcessingLimits.self, forKey: .continuedProcessing)
            ?? defaults.continuedProcessing
        memory = try container.decodeIfPresent(MemoryResponseSettings.self, forKey: .memory) ?? defaults.memory
        if container.contains(.utcOffsetSeconds) {
            utcOffsetSeconds = try integer(.utcOffsetSeconds, 0, in: -50_400...50_400)
        }
        if expirationWarning > backgroundTaskBudget {
            throw DecodingError.dataCorruptedError(
                forKey: .expirationWarning, in: container,
                debugDescription: "must not exceed backgroundTaskBudget (\(backgroundTaskBudget))")
        }
    }
}

extension CoreConfiguration {
    var launch: Duration { .seconds(double: launchTimeout) }
    var didEnterBackground: Duration { .seconds(double: didEnterBackgroundTimeout) }
    var willTerminate: Duration { .seconds(double: willTerminateTimeout) }
    var callback: Duration { .seconds(double: callbackTimeout) }
    var suspend: Duration { .seconds(double: suspendDelay) }
    var grace: Duration { .seconds(double: terminationGrace) }
    var reattach: Duration { .seconds(double: reattachTimeout) }
    var budget: Duration { .seconds(double: backgroundTaskBudget) }
    var warning: Duration { .seconds(double: expirationWarning) }
    var taskGrace: Duration { .seconds(double: taskExpirationGrace) }
    var keepAliveHandler: Duration { .seconds(double: keepAliveHandlerTime) }
    var keepAliveWindow: Duration { .seconds(double: max(keepAliveTolerance, keepAliveHandlerTime)) }
    var voipSocketEvent: Duration { .seconds(double: voipSocketEventTime) }
    var accessoryEvent: Duration { .seconds(double: accessoryEventTime) }
    var remoteNotificationRuntime: Duration { .seconds(double: remoteNotificationTime) }
    var localClock: LocalClock { LocalClock(utcOffsetSeconds: utcOffsetSeconds ?? 0) }

    /// The runtime of a task of this kind.
    func runtime(of kind: TaskKind) -> Duration {
        switch kind {
        case .processing: .seconds(double: processingRuntime)
        case .continued: .seconds(double: continuedProcessing.progressTimeout)  // renewed by each progress report
        case .appRefresh, .fetch: .seconds(double: refreshRuntime)
        }
    }
}
