/// Names one app's background session: the app and the identifier it gave (SPEC TR-1).
public struct TransferSessionKey: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The app.
    public var app: AppID
    /// The session's identifier, as the app gave it.
    public var identifier: String

    /// A key.
    public init(app: AppID, identifier: String) {
        self.app = app
        self.identifier = identifier
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.app.rawValue, lhs.identifier) < (rhs.app.rawValue, rhs.identifier)
    }

    public var description: String { "\(app)/\(identifier)" }
}

/// How an app configured a background session; the last configuration it opened the session with wins.
public struct TransferSessionConfiguration: Hashable, Sendable, Codable {
    /// Every task of the session waits for good conditions (SPEC TR-5), as if each were discretionary.
    public var discretionary: Bool
    /// When all of the session's tasks have finished, the app is launched (or resumed) to hear of them (SPEC TR-3).
    public var sendsLaunchEvents: Bool
    /// Tasks may run on a metered network (cellular, a hotspot).
    public var allowsMeteredNetwork: Bool

    /// A configuration; the defaults are those of a background session on the platform.
    public init(discretionary: Bool = false, sendsLaunchEvents: Bool = true, allowsMeteredNetwork: Bool = true) {
        self.discretionary = discretionary
        self.sendsLaunchEvents = sendsLaunchEvents
        self.allowsMeteredNetwork = allowsMeteredNetwork
    }
}

/// One app's background session.
public struct TransferSession: Hashable, Sendable, Codable {
    /// Which.
    public var key: TransferSessionKey
    /// How the app configured it.
    public var configuration: TransferSessionConfiguration
    /// The app was launched or resumed to hear of the session's finished tasks, and has not fetched them since: it is
    /// not woken again for the same events.
    public var eventsSignalled: Bool = false

    /// A session.
    public init(key: TransferSessionKey, configuration: TransferSessionConfiguration) {
        self.key = key
        self.configuration = configuration
    }
}

/// How often an app was launched for its transfers since the user last opened it: each launch doubles the wait
/// before the next one (SPEC TR-3; decision 0037).
public struct TransferRelaunches: Hashable, Sendable, Codable {
    /// Launches since the user last opened the app.
    public var count: Int = 0
    /// The last of them.
    public var lastAt: Instant?

    /// None yet.
    public init(count: Int = 0, lastAt: Instant? = nil) {
        self.count = count
        self.lastAt = lastAt
    }

    /// The earliest instant of the next launch: at once for the first, then `base`, doubling per launch, at most `cap`.
    public func notBefore(base: Double, cap: Double) -> Instant? {
        guard count > 0, let lastAt else { return nil }
        let delay = min(base * Double(1 << min(count - 1, 30)), cap)
        return lastAt + .seconds(double: delay)
    }
}
