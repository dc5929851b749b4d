/// The user-facing state of the device: which app is in front, the lock screen, a pending interruption.
public struct DeviceState: Hashable, Sendable, Codable {
    /// The app in the foreground (inactive or active), if any (SPEC LC-1: at most one).
    public var foregroundApp: AppID?
    /// Whether the screen is locked.
    public var locked: Bool = false
    /// The app that was in front when the screen was locked; unlocking returns to it.
    public var appBeforeLock: AppID?
    /// An interruption (an incoming call, an alert) in progress, and the app it covers.
    public var interruption: Interruption?
    /// Device-wide settings.
    public var settings: DeviceSettings = .init()

    /// An interruption in progress.
    public struct Interruption: Hashable, Sendable, Codable {
        /// The app it covers, if any was in front.
        public var covering: AppID?
    }

    /// The initial state: unlocked, at the home screen.
    public init() {}
}
