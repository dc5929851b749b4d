import OffstageCore

/// Reads power and network together into the core's `MachineReading` (SPEC SET-1: device conditions read from
/// the machine where it can).
public struct MachineConditionsReader: Sendable {
    /// Reads the power supplies.
    public let power: PowerSupplyReader
    /// Reads the network interfaces.
    public let network: NetworkReader

    /// A reader of the given sources; the defaults read the real sysfs.
    public init(power: PowerSupplyReader = PowerSupplyReader(), network: NetworkReader = NetworkReader()) {
        self.power = power
        self.network = network
    }

    /// What the machine says now. The network is always known (an interface list can always be read: no
    /// interface means none); battery level and charging are nil when the machine has no supply telling them.
    public func read() -> MachineReading {
        let power = power.read()
        return MachineReading(batteryLevel: power.batteryLevel, charging: power.charging, network: network.read())
    }
}
