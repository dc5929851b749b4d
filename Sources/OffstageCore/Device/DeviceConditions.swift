/// The kind of network the device is on (SPEC SET-1).
public enum NetworkKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// No usable network.
    case none
    /// A network without a data cap (Wi-Fi, Ethernet).
    case unmetered
    /// A network whose data is counted (cellular, a phone's hotspot).
    case metered
}

/// What the machine says about its power and network, as read by the shell; nil where it cannot tell.
public struct MachineReading: Hashable, Sendable, Codable {
    /// Battery charge in percent (0...100); nil when the machine has no battery.
    public var batteryLevel: Int?
    /// Whether external power is connected; nil when it cannot be told.
    public var charging: Bool?
    /// The network kind; nil when it cannot be told.
    public var network: NetworkKind?

    /// Creates a reading.
    public init(batteryLevel: Int? = nil, charging: Bool? = nil, network: NetworkKind? = nil) {
        self.batteryLevel = batteryLevel
        self.charging = charging
        self.network = network
    }
}

/// The conditions the scheduler obeys, as they stand: each an override if one is set, else the machine's reading,
/// else a default (a machine without a battery is on mains power at 100 %; a machine that cannot tell its network
/// is taken to be on an unmetered one).
public struct DeviceConditions: Hashable, Sendable, Codable {
    /// Battery charge in percent.
    public var batteryLevel: Int
    /// External power connected.
    public var charging: Bool
    /// The network kind.
    public var network: NetworkKind
    /// Not in use: locked for the idle delay, or set so by hand.
    public var idle: Bool
    /// Low power mode.
    public var lowPowerMode: Bool

    /// Creates conditions.
    public init(batteryLevel: Int, charging: Bool, network: NetworkKind, idle: Bool, lowPowerMode: Bool) {
        self.batteryLevel = batteryLevel
        self.charging = charging
        self.network = network
        self.idle = idle
        self.lowPowerMode = lowPowerMode
    }
}
