/// The app's handler of a session's events, running (SPEC TR-3).
public struct TransferEventsRun: Hashable, Sendable {
    /// The run's number, sent with the callback and given back with the completion.
    public var id: UInt64
    /// The session's identifier.
    public var session: String
    /// When it was called.
    public var startedAt: Instant
    /// When it no longer keeps the app running.
    public var deadline: Instant
}

/// What the transfer queue's decisions depend on besides the tasks: when any changes, it decides again.
struct TransferInputs: Hashable, Sendable {
    var conditions: DeviceConditions
    var foreground: AppID?
    var dataSaver: Bool
}
