/// The kind of network the device is on (SPEC SET-1).
public enum NetworkKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// No usable network.
    case none
    /// A network without a data cap (Wi-Fi, Ethernet).
    case unmetered
    /// A network whose data is counted (cellular, a phone's hotspot).
    case metered
}

/// What the machine says about its power, network, memory and temperature, as read by the shell; nil where it
/// cannot tell. A reading stored by an older version lacks the newer keys: they decode as nil (cannot tell).
public struct MachineReading: Hashable, Sendable, Codable {
    /// Battery charge in percent (0...100); nil when the machine has no battery.
    public var batteryLevel: Int?
    /// Whether external power is connected; nil when it cannot be told.
    public var charging: Bool?
    /// The network kind; nil when it cannot be told.
    public var network: NetworkKind?
    /// Memory pressure; nil when it cannot be told (neither PSI nor /proc/meminfo readable).
    public var memoryPressure: MemoryPressure?
    /// The thermal state; nil when it cannot be told.
    public var thermalState: ThermalState?

    /// Creates a reading.
    public init(
        batteryLevel: Int? = nil, charging: Bool? = nil, network: NetworkKind? = nil,
        memoryPressure: MemoryPressure? = nil, thermalState: ThermalState? = nil
    ) {
        self.batteryLevel = batteryLevel
        self.charging = charging
        self.network = network
        self.memoryPressure = memoryPressure
        self.thermalState = thermalState
    }
}

/// The conditions the scheduler obeys, as they stand: each an override if one is set, else the machine's reading,
/// else a default (a machine without a battery is on mains power at 100 %; a machine that cannot tell its network
/// is taken to be on an unmetered one; one that cannot tell its memory pressure or temperature is taken to be at
/// normal and nominal).
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
    /// Memory pressure. Default normal.
    public var memoryPressure: MemoryPressure = .normal
    /// How hot the device is. Default nominal.
    public var thermalState: ThermalState = .nominal

    /// Creates conditions.
    public init(
        batteryLevel: Int, charging: Bool, network: NetworkKind, idle: Bool, lowPowerMode: Bool,
        memoryPressure: MemoryPressure = .normal, thermalState: ThermalState = .nominal
    ) {
        self.batteryLevel = batteryLevel
        self.charging = charging
        self.network = network
        self.idle = idle
        self.lowPowerMode = lowPowerMode
        self.memoryPressure = memoryPressure
        self.thermalState = thermalState
    }

    // Conditions written by an older version lack memory pressure and the thermal state: they are the defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        batteryLevel = try container.decode(Int.self, forKey: .batteryLevel)
        charging = try container.decode(Bool.self, forKey: .charging)
        network = try container.decode(NetworkKind.self, forKey: .network)
        idle = try container.decode(Bool.self, forKey: .idle)
        lowPowerMode = try container.decode(Bool.self, forKey: .lowPowerMode)
        memoryPressure = try container.decodeIfPresent(MemoryPressure.self, forKey: .memoryPressure) ?? .normal
        thermalState = try container.decodeIfPresent(ThermalState.self, forKey: .thermalState) ?? .nominal
    }
}
