/// Identifies a finite-length background task, as `UIBackgroundTaskIdentifier`.
public struct BackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The number the system gave the task.
    public var rawValue: UInt64

    /// Wraps a number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Returned when a task cannot begin (the background time is spent, or the daemon is unreachable).
    public static let invalid = BackgroundTaskIdentifier(rawValue: 0)

    public var description: String { "BackgroundTask(\(rawValue))" }
}
