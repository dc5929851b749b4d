/// Device-wide settings and conditions the user or the machine controls (SPEC SET-1).
public struct DeviceSettings: Hashable, Sendable, Codable {
    /// When false every app behaves as if it declared `UIApplicationExitsOnSuspend` (SPEC LC-7).
    public var multitaskingSupported: Bool = true
    /// Background app refresh for the whole device (SPEC SET-1, SCH-2).
    public var backgroundRefresh: Bool = true
    /// Low power mode: no background refresh or processing (SPEC SCH-2, SCH-6).
    public var lowPowerMode: Bool = false
    /// Data saver: apps not exempt use no background data on metered networks (SPEC SET-1, SET-2).
    public var dataSaver: Bool = false
    /// The device's time zone, an IANA name: calendar notification triggers that name no zone follow it (SPEC NT-1).
    public var timeZone: String = "UTC"

    /// The defaults.
    public init() {}

    // Settings saved by an older version lack newer keys: they keep their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        multitaskingSupported = try container.decodeIfPresent(Bool.self, forKey: .multitaskingSupported) ?? true
        backgroundRefresh = try container.decodeIfPresent(Bool.self, forKey: .backgroundRefresh) ?? true
        lowPowerMode = try container.decodeIfPresent(Bool.self, forKey: .lowPowerMode) ?? false
        dataSaver = try container.decodeIfPresent(Bool.self, forKey: .dataSaver) ?? false
        timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone) ?? "UTC"
    }
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
