import OffstageCore

/// One observable thing that happened in a simulation.
public struct TraceRecord: Hashable, Sendable {
    /// What happened.
    public enum Event: Hashable, Sendable {
        case launched(LaunchReason)
        case callback(String)
        case callbackReturned(String)
        case frozen
        case thawed
        case sigterm
        case sigkill
        case taskBegan(String, BackgroundTaskID)
        case taskEnded(String)
        case exited(ExitStatus)
        case taskCompleted(String, TaskResult)
    }

    /// When.
    public var at: Instant
    /// Which app.
    public var app: AppID
    /// What.
    public var event: Event
}
