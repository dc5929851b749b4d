/// An accessory an app asked to be woken for (SPEC MODE-4): a name the app chose, the path of the device's channel and
/// the background mode it belongs to.
///
/// The path names a character device (a serial port `/dev/ttyACM0`, a Bluetooth RFCOMM port `/dev/rfcomm0`), a
/// stable link to one (udev's `/dev/serial/by-id/…`), or a Unix socket. The accessory is connected while the path
/// exists; the daemon watches it appear and disappear, and the app opens it itself.
public struct AccessoryRegistration: Hashable, Sendable, Codable {
    /// The app's name for it, unique within the app (`scanner`, `heart-rate`).
    public var name: String
    /// The absolute path of the accessory's channel.
    public var path: String
    /// `external-accessory`, `bluetooth-central` or `bluetooth-peripheral`.
    public var mode: BackgroundMode

    /// Creates a registration; ``validated()`` checks it.
    public init(name: String, path: String, mode: BackgroundMode) {
        self.name = name
        self.path = path
        self.mode = mode
    }

    /// The background modes an accessory may belong to.
    public static let modes: [BackgroundMode] = [.externalAccessory, .bluetoothCentral, .bluetoothPeripheral]

    /// The longest name and path accepted.
    static let maximumNameLength = 64
    static let maximumPathLength = 4_095

    /// The registration, or what is wrong with it and the fix.
    public func validated() throws(CoreError) -> AccessoryRegistration {
        let allowed = name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)
        }
        guard !name.isEmpty, name.count <= Self.maximumNameLength, allowed else {
            throw CoreError(
                .invalidArgument, "\(QuotedText.quote(name)) is not an accessory name",
                fix: "use 1 to \(Self.maximumNameLength) letters, digits, '.', '_' or '-'")
        }
        guard path.hasPrefix("/"), path.utf8.count <= Self.maximumPathLength, !path.utf8.contains(0),
            !path.split(separator: "/").contains("..")
        else {
            throw CoreError(
                .invalidArgument, "\(QuotedText.quote(path)) is not an absolute path to an accessory",
                fix: "give the device's absolute path without '..', such as /dev/ttyACM0 or /dev/serial/by-id/…")
        }
        guard Self.modes.contains(mode) else {
            throw CoreError(
                .invalidArgument, "'\(mode.rawValue)' is not an accessory mode",
                fix: "use one of \(Self.modes.map(\.rawValue).joined(separator: ", "))")
        }
        return self
    }
}

/// What happened to an accessory, as its app hears it (SPEC MODE-4).
public enum AccessoryEvent: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The accessory's channel appeared (`EAAccessoryDidConnect`, `centralManager(_:didConnect:)`).
    case connected
    /// The accessory's channel went away, or its peer hung up (`EAAccessoryDidDisconnect`).
    case disconnected
    /// The accessory sent data; it waits, unread, in the session the app handed off.
    case data

    public var description: String { rawValue }
}
