/// What the power supplies say about the machine: the half of a `MachineReading` that `PowerSupplyReader` fills.
public struct PowerReading: Hashable, Sendable {
    /// Battery charge in percent (0...100); nil when the machine has no system battery.
    public var batteryLevel: Int?
    /// Whether external power is connected; nil when no supply says anything about it.
    public var charging: Bool?

    /// Creates a reading.
    public init(batteryLevel: Int? = nil, charging: Bool? = nil) {
        self.batteryLevel = batteryLevel
        self.charging = charging
    }
}
