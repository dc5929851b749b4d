import Foundation
import OffstageCore
import OffstageSimulator
import Testing

private let exporter: AppID = "com.example.exporter"
private let sync: AppID = "com.example.sync"
private let pattern = "com.example.export.*"

private func install(_ sim: inout Simulation, _ id: AppID) {
    sim.install(
        Manifest(id: id, executable: "app", permittedTaskIdentifiers: [pattern]),
        behavior: AppBehavior().with(\.tasks, TaskBehavior()))
}

private func configuration(
    memory: MemoryPressure = .critical, thermal: ThermalState = .serious
) -> CoreConfiguration {
    var configuration = CoreConfiguration()
    configuration.continuedProcessing.slots = 2
    configuration.continuedProcessing.slotsUnderPressure = 1
    configuration.continuedProcessing.pressureMemory = memory
    configuration.continuedProcessing.pressureThermal = thermal
    return configuration
}

/// Two continued-processing tasks running in the background — the Exporter's at 30 %, the Sync's at 50 % — and a
/// third request of the Sync queued behind them (both slots taken).
private func twoRunningOneQueued(_ configuration: CoreConfiguration = configuration()) throws -> Simulation {
    var sim = Simulation(configuration: configuration)
    install(&sim, exporter)
    install(&sim, sync)
    try sim.openAndSettle(exporter)
    sim.submitContinued(exporter, "com.example.export.1", title: "Exporting")
    try sim.openAndSettle(sync)
    sim.submitContinued(sync, "com.example.export.2", title: "Syncing")
    sim.submitContinued(sync, "com.example.export.3", title: "Syncing more")
    sim.home()
    try sim.reportProgress(exporter, "com.example.export.1", completed: 30, total: 100)
    try sim.reportProgress(sync, "com.example.export.2", completed: 1, total: 2)
    sim.run(for: .seconds(1))
    return sim
}

@Suite("Memory and thermal pressure as device conditions (SPEC SCH-11, MEM-1, SET-1)")
struct PressureConditionTests {
    @Test("SCH-11, MEM-1: memory pressure turning critical ends the continued-processing task with the least progress, naming memory pressure; back to normal, the queued request starts")
    func memoryPressureEndsLeastProgress() throws {
        var sim = try twoRunningOneQueued()
        #expect(sim.continuedTasks(of: sync).map(\.state) == [.running, .queued])

        sim.machineReading(MachineReading(memoryPressure: .warning))
        sim.run(for: .milliseconds(100))
        #expect(sim.logLines(of: exporter, .taskDone).isEmpty, "a warning is not pressure by default")

        sim.machineReading(MachineReading(memoryPressure: .critical))
        sim.run(for: .milliseconds(100))
        #expect(sim.core.conditions(at: sim.now).memoryPressure == .critical)
        let ended = try #require(sim.logLines(of: exporter, .taskDone).last)
        #expect(
            ended.contains("— ended under pressure (memory pressure is critical): it reported the least progress (30 % (30 of 100)) of the 2 running"),
            "\(ended)")
        #expect(sim.log.contains { $0.app == nil && $0.kind == .device && $0.message == "memory pressure critical (machine)" })
        #expect(sim.continuedTasks(of: exporter).isEmpty)
        #expect(sim.continuedTasks(of: sync).map(\.state) == [.running, .queued], "one slot under pressure, taken")
        let summary = try sim.core.tasks(of: sync, at: sim.now).first { $0.identifier == "com.example.export.3" }?.summary
        #expect(summary == "queued for a continued-processing slot: 1 of 1 taken (memory pressure is critical: 1 under pressure)")

        sim.machineReading(MachineReading(memoryPressure: .normal))
        sim.run(for: .milliseconds(100))
        #expect(sim.continuedTasks(of: sync).map(\.state) == [.running, .running], "the queued request started again")
        #expect(sim.logLines(of: sync, .taskDone).isEmpty)
    }

    @Test("SCH-11, §11 idle: the core depends on memory pressure and the thermal state only while continued-processing work is queued or running — the daemon reads them only then")
    func dependsOnPressureOnlyWithContinuedWork() throws {
        var sim = Simulation(configuration: configuration())
        install(&sim, exporter)
        try sim.openAndSettle(exporter)
        #expect(!sim.core.dependsOnDevicePressure, "nothing continued: nothing to read the machine for")
        sim.submitContinued(exporter, "com.example.export.1", title: "Exporting")
        sim.run(for: .milliseconds(100))
        #expect(sim.core.dependsOnDevicePressure)
        _ = try sim.cancelContinued(exporter, "com.example.export.1")
        sim.run(for: .seconds(1))
        #expect(sim.continuedTasks(of: exporter).isEmpty)
        #expect(!sim.core.dependsOnDevicePressure, "the last continued task ended")
    }

    @Test("SCH-11: a hot device (thermal state serious, set by hand) ends the task with the least progress, naming the thermal state; fair is not pressure; auto returns to the machine's nominal and the queued request starts")
    func thermalPressureEndsLeastProgress() throws {
        var sim = try twoRunningOneQueued()
        try sim.setConditions(ConditionOverrides(thermalState: .fair))
        sim.run(for: .milliseconds(100))
        #expect(sim.logLines(of: exporter, .taskDone).isEmpty, "fair is not pressure by default")

        try sim.setConditions(ConditionOverrides(thermalState: .serious))
        sim.run(for: .milliseconds(100))
        let ended = try #require(sim.logLines(of: exporter, .taskDone).last)
        #expect(
            ended.contains("— ended under pressure (the device is hot (thermal state serious)): it reported the least progress (30 % (30 of 100)) of the 2 running"),
            "\(ended)")
        #expect(sim.log.contains { $0.kind == .device && $0.message == "thermal state serious (set by hand)" })
        #expect(sim.continuedTasks(of: sync).map(\.state) == [.running, .queued])

        try sim.setConditions(ConditionOverrides())
        sim.run(for: .milliseconds(100))
        #expect(sim.core.conditions(at: sim.now).thermalState == .nominal, "the machine cannot tell: nominal")
        #expect(sim.continuedTasks(of: sync).map(\.state) == [.running, .running])
    }

    @Test("SCH-11: which levels count as pressure is a setting: with warning and fair, each of them ends a task; an override wins over the machine's reading")
    func levelsAreSettings() throws {
        var memory = try twoRunningOneQueued(configuration(memory: .warning))
        memory.machineReading(MachineReading(memoryPressure: .warning))
        memory.run(for: .milliseconds(100))
        #expect(memory.logLines(of: exporter, .taskDone).last?.contains("(memory pressure is warning)") == true)

        var thermal = try twoRunningOneQueued(configuration(thermal: .critical))
        thermal.machineReading(MachineReading(thermalState: .serious))
        thermal.run(for: .milliseconds(100))
        #expect(thermal.logLines(of: exporter, .taskDone).isEmpty, "serious is below the configured critical")
        try thermal.setConditions(ConditionOverrides(thermalState: .nominal))
        thermal.machineReading(MachineReading(thermalState: .critical))
        thermal.run(for: .milliseconds(100))
        #expect(thermal.logLines(of: exporter, .taskDone).isEmpty, "the override (nominal) wins over the machine")
        try thermal.setConditions(ConditionOverrides())
        thermal.run(for: .milliseconds(100))
        #expect(thermal.logLines(of: exporter, .taskDone).last?.contains("(the device is hot (thermal state critical))") == true)
    }

    @Test("SCH-11: the policy names the first pressure that holds, low power before memory before heat; defaults are no pressure")
    func policyNamesThePressure() {
        let policy = ContinuedProcessingPolicy(limits: .init())
        var conditions = DeviceConditions(batteryLevel: 80, charging: false, network: .unmetered, idle: false, lowPowerMode: false)
        #expect((conditions.memoryPressure, conditions.thermalState) == (.normal, .nominal))
        #expect(policy.pressure(conditions) == nil)
        conditions.thermalState = .critical
        #expect(policy.pressure(conditions) == "the device is hot (thermal state critical)")
        conditions.memoryPressure = .critical
        #expect(policy.pressure(conditions) == "memory pressure is critical")
        conditions.lowPowerMode = true
        #expect(policy.pressure(conditions) == "low power mode is on")
    }

    @Test("SCH-11: the pressure levels decode from a configuration file by name; normal or nominal (always pressure) and unknown names are refused naming the accepted ones")
    func limitsDecode() throws {
        func decode(_ json: String) throws -> ContinuedProcessingLimits {
            try JSONDecoder().decode(ContinuedProcessingLimits.self, from: Data(json.utf8))
        }
        let defaults = try decode("{}")
        #expect((defaults.pressureMemory, defaults.pressureThermal) == (.critical, .serious))
        let set = try decode(#"{"pressureMemory": "warning", "pressureThermal": "critical"}"#)
        #expect((set.pressureMemory, set.pressureThermal) == (.warning, .critical))
        for bad in [#"{"pressureMemory": "normal"}"#, #"{"pressureMemory": "high"}"#] {
            #expect { try decode(bad) } throws: { "\($0)".contains("must be one of warning, critical") }
        }
        #expect { try decode(#"{"pressureThermal": "nominal"}"#) } throws: {
            "\($0)".contains("must be one of fair, serious, critical")
        }
    }

    @Test("SET-1: device state and conditions saved before memory pressure and the thermal state decode with the machine unable to tell and no overrides; new ones round-trip")
    func olderStateDecodes() throws {
        let oldState = #"{"locked": false, "machine": {"batteryLevel": 40, "charging": true}, "overrides": {"network": "metered"}}"#
        let state = try JSONDecoder().decode(DeviceState.self, from: Data(oldState.utf8))
        #expect(state.machine == MachineReading(batteryLevel: 40, charging: true))
        #expect(state.overrides == ConditionOverrides(network: .metered))
        let oldConditions = #"{"batteryLevel": 40, "charging": true, "network": "metered", "idle": false, "lowPowerMode": false}"#
        let conditions = try JSONDecoder().decode(DeviceConditions.self, from: Data(oldConditions.utf8))
        #expect((conditions.memoryPressure, conditions.thermalState) == (.normal, .nominal))

        var newState = DeviceState()
        newState.machine = MachineReading(memoryPressure: .warning, thermalState: .fair)
        newState.overrides = ConditionOverrides(memoryPressure: .critical, thermalState: .serious)
        let decoded = try JSONDecoder().decode(DeviceState.self, from: JSONEncoder().encode(newState))
        #expect(decoded == newState)
        let hot = DeviceConditions(
            batteryLevel: 1, charging: false, network: .none, idle: true, lowPowerMode: true, memoryPressure: .critical,
            thermalState: .critical)
        #expect(try JSONDecoder().decode(DeviceConditions.self, from: JSONEncoder().encode(hot)) == hot)
    }

    @Test("SCH-11: the levels are ordered by severity, and their names list as the CLI and errors say them")
    func levelOrder() {
        #expect(MemoryPressure.allCases.sorted() == [.normal, .warning, .critical])
        #expect(ThermalState.allCases.sorted() == [.nominal, .fair, .serious, .critical])
        #expect(MemoryPressure.names == "normal, warning or critical")
        #expect(ThermalState.names == "nominal, fair, serious or critical")
    }
}
