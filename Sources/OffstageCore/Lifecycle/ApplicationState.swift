/// An app's state as the user and the SDK see it (SPEC LC-1).
public enum ApplicationState: String, Hashable, Sendable, Codable, CaseIterable {
    /// No process.
    case notRunning
    /// In the foreground, not receiving events (launching, or covered by an interruption).
    case inactive
    /// In the foreground, receiving events.
    case active
    /// Running in the background.
    case background
    /// In memory, frozen: it uses no CPU.
    case suspended

    /// Whether the state is one of the two foreground states.
    public var isForeground: Bool { self == .inactive || self == .active }
}

/// Why an app's process was started (SPEC LC-2).
public enum LaunchReason: String, Hashable, Sendable, Codable, CaseIterable {
    /// The user opened it.
    case user
    /// An app-refresh task is due.
    case refresh
    /// A processing task is due.
    case processing
    /// A continued-processing task the user started got its slot after the app left (SPEC SCH-11).
    case continuedProcessing = "continued-processing"
    /// The legacy background fetch.
    case fetch
    /// A background push arrived.
    case push
    /// Its background transfers finished.
    case transferEvents = "transfer-events"
    /// A significant location change.
    case location
    /// VoIP keep-alive or incoming data on its socket.
    case voip
    /// An accessory connected, disconnected or sent data.
    case accessory
    /// The daemon started (VoIP apps are launched at boot).
    case boot
    /// The user tapped one of its notifications (SPEC NT-2).
    case notification
    /// The user chose an action of one of its notifications that the app handles in the background.
    case notificationAction = "notification-action"

    /// Whether a launch for this reason puts the app in the foreground.
    public var isForeground: Bool { self == .user || self == .notification }
}
