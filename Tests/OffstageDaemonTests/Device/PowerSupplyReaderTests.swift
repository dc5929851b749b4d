import Foundation
import Testing

@testable import OffstageDaemon

@Suite("Reading power supplies")
struct PowerSupplyReaderTests {
    @Test("A laptop on battery: the battery's level, not charging")
    func laptopOnBattery() throws {
        let reading = try SysfsFixture.with { fixture in
            try fixture.supply("AC", type: "Mains", ["online": "0"])
            try fixture.supply("BAT0", type: "Battery", ["capacity": "57", "status": "Discharging", "present": "1"])
            return PowerSupplyReader(root: fixture.root).read()
        }
        #expect(reading == PowerReading(batteryLevel: 57, charging: false))
    }

    @Test("A laptop on its adapter is charging, whether the adapter or only the battery says so")
    func laptopCharging() throws {
        try SysfsFixture.with { fixture in
            try fixture.supply("AC", type: "Mains", ["online": "1"])
            try fixture.supply("BAT0", type: "Battery", ["capacity": "80", "status": "Charging"])
            #expect(PowerSupplyReader(root: fixture.root).read() == PowerReading(batteryLevel: 80, charging: true))
        }
        // Some laptops expose no adapter supply at all: the battery's status is then the only witness.
        for status in ["Charging", "Full", "Not charging"] {
            try SysfsFixture.with { fixture in
                try fixture.supply("BAT1", type: "Battery", ["capacity": "100", "status": status])
                #expect(
                    PowerSupplyReader(root: fixture.root).read() == PowerReading(batteryLevel: 100, charging: true),
                    "status \(status)")
            }
        }
    }

    @Test("A desktop without a battery: no level, on external power")
    func desktopWithoutBattery() throws {
        let reading = try SysfsFixture.with { fixture in
            try fixture.supply("ACAD", type: "Mains", ["online": "1"])
            return PowerSupplyReader(root: fixture.root).read()
        }
        #expect(reading == PowerReading(batteryLevel: nil, charging: true))
    }

    @Test("A phone: its USB port online means charging, offline means on battery")
    func phoneWithUSB() throws {
        try SysfsFixture.with { fixture in
            try fixture.supply("battery", type: "Battery", ["capacity": "54", "status": "Charging"])
            try fixture.supply("usb", type: "USB", ["online": "1"])
            try fixture.supply("wireless", type: "Wireless", ["online": "0"])
            #expect(PowerSupplyReader(root: fixture.root).read() == PowerReading(batteryLevel: 54, charging: true))

            try fixture.supply("battery", type: "Battery", ["capacity": "53", "status": "Discharging"])
            try fixture.supply("usb", type: "USB", ["online": "0"])
            #expect(PowerSupplyReader(root: fixture.root).read() == PowerReading(batteryLevel: 53, charging: false))

            // A wireless charger is external power as well, and older kernels' USB_* types are USB.
            try fixture.supply("wireless", type: "Wireless", ["online": "1"])
            #expect(PowerSupplyReader(root: fixture.root).read().charging == true)
            #expect(PowerSupply.Kind(typeAttribute: "USB_PD") == .usb)
        }
    }

    @Test("A mouse's battery (scope Device) is not the machine's")
    func mouseBatteryIgnored() throws {
        try SysfsFixture.with { fixture in
            try fixture.supply(
                "hidpp_battery_0", type: "Battery", ["capacity": "12", "status": "Discharging", "scope": "Device"])
            let reader = PowerSupplyReader(root: fixture.root)
            #expect(reader.supplies().map(\.powersOtherDevice) == [true], "it is read, then left out")
            #expect(reader.read() == PowerReading(batteryLevel: nil, charging: nil))

            try fixture.supply("BAT0", type: "Battery", ["capacity": "90", "status": "Discharging", "scope": "System"])
            #expect(reader.read() == PowerReading(batteryLevel: 90, charging: false))
        }
    }

    @Test("No supplies at all (a server, a virtual machine): no battery and unknown external power")
    func noSupplies() throws {
        try SysfsFixture.with { fixture in
            #expect(PowerSupplyReader(root: fixture.root).read() == PowerReading(batteryLevel: nil, charging: nil))
            #expect(
                PowerSupplyReader(root: fixture.root + "/absent").read()
                    == PowerReading(batteryLevel: nil, charging: nil))
        }
    }

    @Test("Two batteries are weighed by what each holds; an empty bay is left out")
    func twoBatteries() throws {
        try SysfsFixture.with { fixture in
            try fixture.supply(
                "BAT0", type: "Battery", ["capacity": "100", "status": "Discharging", "energy_full": "20000000"])
            try fixture.supply(
                "BAT1", type: "Battery", ["capacity": "0", "status": "Discharging", "energy_full": "60000000"])
            try fixture.supply("BAT2", type: "Battery", ["present": "0", "capacity": "0"])
            #expect(PowerSupplyReader(root: fixture.root).read() == PowerReading(batteryLevel: 25, charging: false))
        }
    }

    @Test("A battery without capacity: the level comes from energy_now / energy_full or charge_now / charge_full")
    func levelFromEnergy() throws {
        try SysfsFixture.with { fixture in
            try fixture.supply(
                "BAT0", type: "Battery", ["energy_now": "15000000", "energy_full": "40000000", "status": "Unknown"])
            // Unknown status and no adapter: nothing says whether external power is there.
            #expect(PowerSupplyReader(root: fixture.root).read() == PowerReading(batteryLevel: 38, charging: nil))
            try fixture.delete("BAT0")
            try fixture.supply("BAT0", type: "Battery", ["charge_now": "1000", "charge_full": "4000"])
            #expect(PowerSupplyReader(root: fixture.root).read().batteryLevel == 25)
        }
    }

    @Test("A UPS says whether the machine is on mains, but its charge is not a battery level")
    func ups() throws {
        try SysfsFixture.with { fixture in
            try fixture.supply("ups", type: "UPS", ["capacity": "100", "status": "Discharging"])
            #expect(PowerSupplyReader(root: fixture.root).read() == PowerReading(batteryLevel: nil, charging: false))
        }
    }

    @Test("This machine's supplies read without error, and an empty class means nil and nil")
    func thisMachine() {
        let reader = PowerSupplyReader()
        let supplies = reader.supplies()
        #expect(reader.read() == PowerSupplyReader.reading(of: supplies))
        if supplies.isEmpty {
            #expect(reader.read() == PowerReading(batteryLevel: nil, charging: nil))
        }
    }
}
