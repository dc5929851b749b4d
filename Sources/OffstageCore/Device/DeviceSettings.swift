/// Device-wide settings and conditions the user or the machine controls (SPEC SET-1).
public struct DeviceSettings: Hashable, Sendable, Codable {
    /// When false every app behaves as if it declared `UIApplicationExitsOnSuspend` (SPEC LC-7).
    public var multitaskingSupported: Bool = true

    /// The defaults.
    public init() {}
}

/// Settings the user chooses per app (SPEC SET-2). Kept across upgrades (SPEC MAN-3).
public struct AppSettings: Hashable, Sendable, Codable {
    /// Background app refresh allowed for this app.
    public var backgroundRefresh: Bool = true
    /// Network use in the background allowed on metered networks.
    public var backgroundData: Bool = true
    /// Anything of the app may run in the background (except audio the user started).
    public var backgroundActivity: Bool = true
    /// Exempt from data saver.
    public var unrestrictedData: Bool = false
    /// Killed for memory pressure only after every other background app.
    public var keptInMemory: Bool = false
    /// Notifications allowed.
    public var notifications: Bool = true

    /// The defaults.
    public init() {}
}
