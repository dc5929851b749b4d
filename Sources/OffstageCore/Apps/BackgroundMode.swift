/// A background mode an app may declare in `UIBackgroundModes` (SPEC MAN-1, MODE).
public enum BackgroundMode: String, CaseIterable, Sendable, Codable, Hashable {
    case audio
    case location
    case voip
    case fetch
    case remoteNotification = "remote-notification"
    case processing
    case externalAccessory = "external-accessory"
    case bluetoothCentral = "bluetooth-central"
    case bluetoothPeripheral = "bluetooth-peripheral"
    case newsstandContent = "newsstand-content"
}
