import Foundation
import OffstageCore
import Testing

@testable import OffstageProtocol

@Suite("Memory pressure and the thermal state in io.offstage.Control (SPEC SCH-11, MEM-1, SET-1)")
struct DevicePressureInterfaceTests {
    @Test("SET-1: Conditions, MachineReading and Overrides carry memoryPressure and thermalState exactly as the IDL says, nulls written out")
    func typesMatchIDL() throws {
        let text = ControlInterface.definition
        let conditions = ControlInterface.Conditions(
            DeviceConditions(
                batteryLevel: 50, charging: true, network: .metered, idle: false, lowPowerMode: false,
                memoryPressure: .critical, thermalState: .serious))
        #expect(try IDLFields.keys(of: conditions) == Set(try #require(IDLFields.type("Conditions", in: text)).keys))
        #expect(conditions.memoryPressure == "critical" && conditions.thermalState == "serious")
        let machine = ControlInterface.Machine(MachineReading())
        #expect(try IDLFields.keys(of: machine) == Set(try #require(IDLFields.type("MachineReading", in: text)).keys))
        let overrides = ControlInterface.Overrides(ConditionOverrides(memoryPressure: .warning))
        #expect(try IDLFields.keys(of: overrides) == Set(try #require(IDLFields.type("Overrides", in: text)).keys))
        #expect(overrides.memoryPressure == "warning" && overrides.thermalState == nil)
        #expect(ControlInterface.SetDeviceParameters.clearable.contains("memoryPressure"))
        #expect(ControlInterface.SetDeviceParameters.clearable.contains("thermalState"))
    }

    @Test("SET-1: conditions from a daemon that knew neither level read as normal and nominal")
    func olderConditionsDecode() throws {
        let old = #"{"batteryLevel": 80, "charging": false, "network": "unmetered", "idle": false, "lowPowerMode": true}"#
        let conditions = try JSONDecoder().decode(ControlInterface.Conditions.self, from: Data(old.utf8))
        #expect(conditions.memoryPressure == "normal" && conditions.thermalState == "nominal" && conditions.lowPowerMode)
    }
}
