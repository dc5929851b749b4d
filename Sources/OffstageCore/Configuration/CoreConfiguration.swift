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

    /// The defaults.
    public init() {}

    /// Keys a configuration file may contain.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case launchTimeout, didEnterBackgroundTimeout, willTerminateTimeout, callbackTimeout, suspendDelay
        case terminationGrace, reattachTimeout, backgroundTaskBudget, expirationWarning
        case crashLoopInitialDelay, crashLoopMaxDelay, crashLoopResetAfter
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = CoreConfiguration()
        func value(_ key: CodingKeys, _ fallback: Double) throws -> Double {
            guard let value = try container.decodeIfPresent(Double.self, forKey: key) else { return fallback }
            guard value.isFinite, value >= 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "must be a non-negative number of seconds")
            }
            return value
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
}
