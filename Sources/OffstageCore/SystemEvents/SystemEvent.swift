/// A system notification an app hears about (SPEC LC-4): while the app is suspended, these queue, one per kind, and
/// arrive before anything else when it runs again; a running app hears them at once.
public enum SystemEvent: String, CaseIterable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The clock was set, or the day changed in a way apps must notice (`significantTimeChangeNotification`).
    case significantTimeChange = "significant-time-change"
    /// The system time zone changed (`NSSystemTimeZoneDidChange`).
    case timeZoneChange = "time-zone-change"
    /// The user's locale changed (`NSLocale.currentLocaleDidChangeNotification`).
    case localeChange = "locale-change"
    /// A device or app setting changed (`UserDefaults.didChangeNotification` for settings).
    case settingsChange = "settings-change"
    /// The battery level changed (`UIDevice.batteryLevelDidChangeNotification`).
    case batteryLevelChange = "battery-level-change"
    /// Charging started or stopped (`UIDevice.batteryStateDidChangeNotification`).
    case batteryStateChange = "battery-state-change"
    /// The network changed: none, unmetered, metered.
    case networkChange = "network-change"
    /// An accessory connected (`EAAccessoryDidConnect`).
    case accessoryConnect = "accessory-connect"
    /// An accessory disconnected (`EAAccessoryDidDisconnect`).
    case accessoryDisconnect = "accessory-disconnect"

    public var description: String { rawValue }
}
