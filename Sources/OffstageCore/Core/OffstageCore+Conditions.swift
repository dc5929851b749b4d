/// Inputs about the device's power, network, memory pressure and temperature (SPEC SET-1, MEM-1, SCH-11): readings
/// from the machine, and overrides by hand.
extension OffstageCore {
    /// The machine's power, network, memory pressure or temperature changed (the shell reads them; the core only
    /// records and reacts).
    public mutating func machineReadingChanged(_ reading: MachineReading, at now: Instant) -> [CoreAction] {
        // Any reading of the machine reads its memory too (SPEC MEM-1): the response may go on.
        if reading.memoryPressure != nil { memory.readingTaken() }
        guard reading != device.machine else { return finish(now) }
        let before = conditions(at: now)
        device.machine = reading
        emit(.saveDevice)
        logConditionChanges(from: before, now, source: "machine")
        schedulerDirty = true
        return finish(now)
    }

    /// Sets conditions by hand (`offstage device`); a nil field returns that condition to the machine's reading.
    public mutating func setConditionOverrides(_ overrides: ConditionOverrides, at now: Instant) throws(CoreError) -> [CoreAction] {
        if let level = overrides.batteryLevel, !(0...100).contains(level) {
            throw CoreError(.invalidArgument, "battery level \(level) is not a percentage", fix: "give a number from 0 to 100")
        }
        guard overrides != device.overrides else { return finish(now) }
        let before = conditions(at: now)
        device.overrides = overrides
        emit(.saveDevice)
        logConditionChanges(from: before, now, source: "set by hand")
        schedulerDirty = true
        return finish(now)
    }

    mutating func logConditionChanges(from before: DeviceConditions, _ now: Instant, source: String) {
        let after = conditions(at: now)
        // Apps hear of the battery and the network as system events (SPEC LC-4).
        if before.batteryLevel != after.batteryLevel { post(.batteryLevelChange, now) }
        if before.charging != after.charging { post(.batteryStateChange, now) }
        if before.network != after.network { post(.networkChange, now) }
        var changes: [String] = []
        if before.batteryLevel != after.batteryLevel { changes.append("battery \(after.batteryLevel) %") }
        if before.charging != after.charging { changes.append(after.charging ? "charging" : "on battery") }
        if before.network != after.network { changes.append("network \(after.network.rawValue)") }
        if before.idle != after.idle { changes.append(after.idle ? "idle" : "not idle") }
        if before.memoryPressure != after.memoryPressure { changes.append("memory pressure \(after.memoryPressure.rawValue)") }
        if before.thermalState != after.thermalState { changes.append("thermal state \(after.thermalState.rawValue)") }
        if !changes.isEmpty { log(now, nil, .device, "\(changes.joined(separator: ", ")) (\(source))") }
        // After the line that says why: the warnings and the endings follow the change (SPEC MEM-1).
        if before.memoryPressure != after.memoryPressure { respondToMemoryPressure(now) }
    }
}
