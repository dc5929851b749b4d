import OffstageCore

/// Reads power, network, memory pressure and temperature together into the core's `MachineReading` (SPEC SET-1:
/// device conditions read from the machine where it can; MEM-1, SCH-11).
public struct MachineConditionsReader: Sendable {
    /// Reads the power supplies.
    public let power: PowerSupplyReader
    /// Reads the network interfaces.
    public let network: NetworkReader
    /// Reads memory pressure; nil reads none (the reading says it cannot tell).
    public let memory: MemoryPressureReader?
    /// Reads the thermal zones; nil reads none.
    public let thermal: ThermalReader?
    /// NetworkManager's metered hint from the system bus (SPEC SET-1); nil reads the interfaces only.
    let networkManager: NetworkManagerMetered?
    /// Why NetworkManager is not read, when it is not.
    let networkManagerProblem: String?

    /// A reader of the given sources; the defaults read the real sysfs for power and network, and neither memory
    /// pressure nor the thermal state (``init(pressure:)`` reads all four from the machine).
    public init(
        power: PowerSupplyReader = PowerSupplyReader(), network: NetworkReader = NetworkReader(),
        memory: MemoryPressureReader? = nil, thermal: ThermalReader? = nil
    ) {
        self.power = power
        self.network = network
        self.memory = memory
        self.thermal = thermal
        self.networkManager = nil
        self.networkManagerProblem = nil
    }

    /// The real machine's sources, with the configured thresholds.
    public init(pressure settings: MachinePressureSettings) {
        self.init(memory: MemoryPressureReader(settings: settings), thermal: ThermalReader(settings: settings))
    }

    /// The real machine's sources, with NetworkManager's hint (or why there is none).
    init(
        pressure settings: MachinePressureSettings, budget: MemoryBudget? = nil, networkManager: NetworkManagerMetered?,
        problem: String?
    ) {
        power = PowerSupplyReader()
        network = NetworkReader()
        memory = MemoryPressureReader(settings: settings).with(budget: budget)
        thermal = ThermalReader(settings: settings)
        self.networkManager = networkManager
        networkManagerProblem = problem
    }

    /// Where the network's kind comes from, for `offstage status`.
    var networkSource: String {
        guard let networkManager else {
            return "the network interfaces (\(networkManagerProblem ?? "NetworkManager is not read"))"
        }
        guard let value = networkManager.value else {
            return "the network interfaces (NetworkManager is not on the system bus)"
        }
        if value.metered == nil { return "the network interfaces (NetworkManager's Metered property is unknown)" }
        return "NetworkManager's Metered property (\(value))"
    }

    /// What the machine says now. The network is always known (an interface list can always be read: no
    /// interface means none); battery level and charging are nil when the machine has no supply telling them;
    /// memory pressure and the thermal state are nil when their sources cannot be read.
    public func read() -> MachineReading {
        let power = power.read()
        var kind = network.read()
        // NetworkManager knows what the interfaces cannot tell: a hotspot's Wi-Fi, a modem the user said is not metered.
        if kind != .none, let metered = networkManager?.value?.metered { kind = metered ? .metered : .unmetered }
        var reading = MachineReading(batteryLevel: power.batteryLevel, charging: power.charging, network: kind)
        readPressure(into: &reading)
        return reading
    }

    /// Replaces the memory pressure and thermal state of `reading` with what the machine says now; memory pressure is
    /// at least `floor`, what a PSI trigger that just fired says.
    public func readPressure(into reading: inout MachineReading, floor: MemoryPressure? = nil) {
        reading.memoryPressure = memory?.read(floor: floor)
        reading.thermalState = thermal?.read()
    }
}
