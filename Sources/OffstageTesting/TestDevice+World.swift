import Foundation
import OffstageCore
import OffstageSimulator

/// What the world does to the test device: its sensors (battery, charger, network, memory), idleness, low power mode
/// and data saver.
extension TestDevice {
    /// The network the device is on.
    public enum Network: Sendable {
        /// No usable network.
        case none
        /// Wi-Fi or Ethernet: not counted.
        case unmetered
        /// Cellular or a phone's hotspot: counted.
        case metered
    }

    /// How short of memory the device is (SPEC MEM-1).
    public enum MemoryPressure: String, Sendable {
        /// Enough memory.
        case normal
        /// Memory is getting short: the running apps get a memory warning.
        case warning
        /// Memory is short: after the warning's grace the system ends apps, suspended ones least recently used first,
        /// one at a time, until it is not.
        case critical
    }

    /// Changes what the device's sensors say; each argument left out stays as it is. The defaults: battery at 80 %,
    /// not charging, an unmetered network, memory pressure normal.
    public func setConditions(
        batteryLevel: Int? = nil, charging: Bool? = nil, network: Network? = nil, memoryPressure: MemoryPressure? = nil
    ) async throws {
        var reading = host.with { $0.simulation.core.device.machine }
        if let memoryPressure { reading.memoryPressure = CoreMemoryPressure(rawValue: memoryPressure.rawValue) }
        if let batteryLevel {
            guard (0...100).contains(batteryLevel) else { throw TestKitError.invalidArgument("batteryLevel \(batteryLevel): must be 0...100") }
            reading.batteryLevel = batteryLevel
        }
        if let charging { reading.charging = charging }
        if let network {
            reading.network =
                switch network {
                case .none: NetworkKind.none
                case .unmetered: .unmetered
                case .metered: .metered
                }
        }
        read(reading)
        try await runUntilIdle()
    }

    /// The device's sensors say `reading` now, as the daemon's machine watcher reports a change.
    func read(_ reading: MachineReading) {
        host.with { state in
            let now = state.simulation.now
            state.simulation.callCore { core in ((), core.machineReadingChanged(reading, at: now)) }
        }
    }

    /// Makes the device idle (not in use) or not, as `offstage device --idle` does; nil returns it to the default:
    /// idle once locked for the idle delay (30 minutes).
    public func setIdle(_ idle: Bool?) async throws {
        try host.with { state in
            let now = state.simulation.now
            var overrides = state.simulation.core.device.overrides
            overrides.idle = idle
            try refusing { try state.simulation.callCore { core in ((), try core.setConditionOverrides(overrides, at: now)) } }
        }
        try await runUntilIdle()
    }

    /// Turns low power mode and data saver on or off; each left out stays as it is.
    public func setPowerAndData(lowPowerMode: Bool? = nil, dataSaver: Bool? = nil) async throws {
        host.with { state in
            var settings = state.simulation.core.device.settings
            if let lowPowerMode { settings.lowPowerMode = lowPowerMode }
            if let dataSaver { settings.dataSaver = dataSaver }
            state.simulation.setDeviceSettings(settings)
        }
        try await runUntilIdle()
    }

}
