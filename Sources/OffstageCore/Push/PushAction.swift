/// What the push inbox asks its shell to persist (SPEC NT-4, NT-5). A push's row is written when it is accepted; these
/// move it on. The shell also marks a push handed to the app when it sends the remote-notification callback, so that
/// a restart after that never calls the handler twice.
public enum PushAction: Hashable, Sendable {
    /// Keep the push held until the app's budget returns (it replaces the app's held push, which is finished
    /// ``PushOutcome/coalesced(into:)`` first).
    case hold(RemotePush)
    /// The push is done with: record how it ended. Nothing more happens to it.
    case finish(id: String, app: AppID, PushOutcome)
}

/// How a push ended, in the push's record (SPEC NT-4: never lost without a record).
public enum PushOutcome: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The app's remote-notification handler completed with this result (an alert it had was shown as well).
    case handled(TaskResult)
    /// Its alert, sound or badge went to the user, or to the app in front (it did not ask to wake the app).
    case shown
    /// Held over budget, it was replaced by a newer background push for the same app, which carries its news.
    case coalesced(into: String)
    /// Its expiration passed before it could be delivered.
    case expired
    /// It was not delivered, for the reason given (force-quit, mode not declared, notifications off, uninstalled).
    case notDelivered(String)
    /// The handler was called but did not complete: it overran, or the app or the daemon ended first.
    case cutOff(String)

    /// The outcome's name in the store and on the wire.
    public var name: String {
        switch self {
        case .handled: "handled"
        case .shown: "shown"
        case .coalesced: "coalesced"
        case .expired: "expired"
        case .notDelivered: "not-delivered"
        case .cutOff: "cut-off"
        }
    }

    /// What it adds to the name: the result, the newer push, the reason.
    public var detail: String? {
        switch self {
        case .handled(let result): result.rawValue
        case .coalesced(let newer): newer
        case .notDelivered(let why), .cutOff(let why): why
        case .shown, .expired: nil
        }
    }

    /// Reads a stored outcome back from its name and detail.
    public init?(name: String, detail: String?) {
        switch name {
        case "handled": guard let result = detail.flatMap(TaskResult.init(rawValue:)) else { return nil }; self = .handled(result)
        case "shown": self = .shown
        case "coalesced": self = .coalesced(into: detail ?? "")
        case "expired": self = .expired
        case "not-delivered": self = .notDelivered(detail ?? "")
        case "cut-off": self = .cutOff(detail ?? "")
        default: return nil
        }
    }

    public var description: String { detail.map { "\(name): \($0)" } ?? name }
}

/// A remote-notification handler the app is running (SPEC NT-4): it has ``deadline`` to complete.
public struct PushRun: Hashable, Sendable, Codable {
    /// Identifies the run; the app completes it with this number.
    public var id: UInt64
    /// The push it handles.
    public var push: String
    /// When the handler was started.
    public var startedAt: Instant
    /// When the app is terminated if it has not completed (30 s, as the platform allows).
    public var deadline: Instant
    /// Whether the device was on battery when it started (only battery runtime counts against the daily budget).
    public var onBattery: Bool
}

/// What the app's remote-notification handler is given (`application(_:didReceiveRemoteNotification:…)`).
public struct RemoteNotificationCall: Hashable, Sendable, Codable {
    /// The run to complete.
    public var run: UInt64
    /// The push's `apns-id`.
    public var push: String
    /// The whole payload, a JSON object in text (the handler's user info).
    public var payload: String

    /// Creates a call.
    public init(run: UInt64, push: String, payload: String) {
        self.run = run
        self.push = push
        self.payload = payload
    }
}
