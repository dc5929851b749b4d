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
