import OffstageProtocol

/// An accessory the app registered with ``AccessoryManager``, as `EAAccessory` or a connected `CBPeripheral`
/// (SPEC MODE-4): the app's name for it, the path of its channel, the background mode it belongs to, and whether it
/// is connected now.
///
/// The accessory is connected while its path exists: a serial port (`/dev/ttyACM0`), a Bluetooth RFCOMM port
/// (`/dev/rfcomm0`), a stable link to one (`/dev/serial/by-id/…`) or a Unix socket. Open it with
/// ``AccessorySession``.
public struct Accessory: Hashable, Sendable, CustomStringConvertible {
    /// The background mode an accessory belongs to; the app's `Info.plist` must declare it in `UIBackgroundModes`.
    public enum Mode: String, Hashable, Sendable, CaseIterable {
        /// A wired or other external accessory (`external-accessory`): a serial scanner, a card reader, a scale.
        case externalAccessory = "external-accessory"
        /// A Bluetooth device the app connects to (`bluetooth-central`), such as a heart-rate strap.
        case bluetoothCentral = "bluetooth-central"
        /// A Bluetooth device that connects to the app (`bluetooth-peripheral`).
        case bluetoothPeripheral = "bluetooth-peripheral"
    }

    /// What happened to an accessory (``AccessoryManagerDelegate``).
    public enum Event: String, Hashable, Sendable, CaseIterable {
        /// Its path appeared (`EAAccessoryDidConnect`, `centralManager(_:didConnect:)`).
        case connected
        /// Its path went away, or the session the app handed off hung up (`EAAccessoryDidDisconnect`).
        case disconnected
        /// It sent data while the app was suspended; the data waits, unread, in the app's session.
        case data
    }

    /// The app's name for it, unique within the app: 1 to 64 letters, digits, `.`, `_` or `-`.
    public var name: String
    /// The absolute path of its channel.
    public var path: String
    /// The background mode it belongs to.
    public var mode: Mode
    /// Whether its path exists (as far as the system last saw).
    public var isConnected: Bool
    /// Whether the system holds a session the app handed off (``AccessorySession/handOff(accessoryNamed:)``), which
    /// it watches while the app is suspended.
    public var hasSession: Bool

    /// Creates an accessory value.
    public init(name: String, path: String, mode: Mode, isConnected: Bool, hasSession: Bool = false) {
        self.name = name
        self.path = path
        self.mode = mode
        self.isConnected = isConnected
        self.hasSession = hasSession
    }

    /// The accessory a daemon's message describes; an unknown mode (from a newer daemon) reads as external.
    init(_ message: ModesInterface.AccessoryMessage) {
        self.init(
            name: message.name, path: message.path, mode: Mode(rawValue: message.mode) ?? .externalAccessory,
            isConnected: message.connected, hasSession: message.session)
    }

    /// `scanner at /dev/ttyACM0 (external-accessory, connected)`.
    public var description: String {
        let state = isConnected ? "connected" : "not connected"
        return "\(name) at \(path) (\(mode.rawValue), \(state)\(hasSession ? ", session" : ""))"
    }
}
