import Foundation

extension Application {
    /// A system notification (SPEC LC-4). While the app is suspended they wait, one per kind, and arrive before
    /// anything else when it runs again; a running app hears them at once.
    public enum SystemEvent: String, CaseIterable, Sendable, Hashable {
        /// The clock was set or the time zone changed.
        case significantTimeChange = "significant-time-change"
        /// The system time zone changed.
        case timeZoneChange = "time-zone-change"
        /// The user's locale changed.
        case localeChange = "locale-change"
        /// A device setting, or one of the app's settings, changed.
        case settingsChange = "settings-change"
        /// The battery level changed.
        case batteryLevelChange = "battery-level-change"
        /// Charging started or stopped.
        case batteryStateChange = "battery-state-change"
        /// The network changed (none, unmetered, metered).
        case networkChange = "network-change"
        /// An accessory connected.
        case accessoryConnect = "accessory-connect"
        /// An accessory disconnected.
        case accessoryDisconnect = "accessory-disconnect"
    }

    /// Posted on the main thread for every system event, with the event's raw value under ``systemEventKey``.
    nonisolated public static let systemEventNotification = Notification.Name("OffstageApplicationSystemEvent")
    /// The `userInfo` key of ``systemEventNotification``.
    nonisolated public static let systemEventKey = "OffstageSystemEvent"
    /// Posted for a significant time change (`UIApplication.significantTimeChangeNotification`).
    nonisolated public static let significantTimeChangeNotification = Notification.Name("OffstageApplicationSignificantTimeChange")
    /// Posted when the battery level changes (`UIDevice.batteryLevelDidChangeNotification`).
    nonisolated public static let batteryLevelDidChangeNotification = Notification.Name("OffstageBatteryLevelDidChange")
    /// Posted when charging starts or stops (`UIDevice.batteryStateDidChangeNotification`).
    nonisolated public static let batteryStateDidChangeNotification = Notification.Name("OffstageBatteryStateDidChange")
    /// Posted when the network changes.
    nonisolated public static let networkDidChangeNotification = Notification.Name("OffstageNetworkDidChange")
    /// Posted when a setting changes (`UserDefaults.didChangeNotification` for settings).
    nonisolated public static let settingsDidChangeNotification = Notification.Name("OffstageSettingsDidChange")
    /// Posted when an accessory connects (`EAAccessoryDidConnect`).
    nonisolated public static let accessoryDidConnectNotification = Notification.Name("OffstageAccessoryDidConnect")
    /// Posted when an accessory disconnects (`EAAccessoryDidDisconnect`).
    nonisolated public static let accessoryDidDisconnectNotification = Notification.Name("OffstageAccessoryDidDisconnect")

    /// The daemon's system-event callback, on the main thread: the delegate where iOS has a delegate method, the
    /// notification iOS posts (Foundation's own for the time zone and the locale), and the generic one.
    func systemEventArrived(_ event: SystemEvent) {
        let center = NotificationCenter.default
        switch event {
        case .significantTimeChange:
            delegate?.applicationSignificantTimeChange(self)
            center.post(name: Self.significantTimeChangeNotification, object: self)
        case .timeZoneChange:
            NSTimeZone.resetSystemTimeZone()
            center.post(name: .NSSystemTimeZoneDidChange, object: nil)
        case .localeChange: center.post(name: NSLocale.currentLocaleDidChangeNotification, object: nil)
        case .settingsChange: center.post(name: Self.settingsDidChangeNotification, object: self)
        case .batteryLevelChange: center.post(name: Self.batteryLevelDidChangeNotification, object: self)
        case .batteryStateChange: center.post(name: Self.batteryStateDidChangeNotification, object: self)
        case .networkChange: center.post(name: Self.networkDidChangeNotification, object: self)
        case .accessoryConnect: center.post(name: Self.accessoryDidConnectNotification, object: self)
        case .accessoryDisconnect: center.post(name: Self.accessoryDidDisconnectNotification, object: self)
        }
        center.post(name: Self.systemEventNotification, object: self, userInfo: [Self.systemEventKey: event.rawValue])
    }
}
