import Foundation
import OffstageCore
import Synchronization
import Testing

@testable import OffstageDaemon

/// `/proc/pressure/memory` as read on an idle machine (Linux 6.18).
private let idlePSI = """
    some avg10=0.00 avg60=0.00 avg300=0.00 total=0
    full avg10=0.00 avg60=0.00 avg300=0.00 total=0

    """

/// The same file on a machine short of memory: tasks waiting for reclaim much of the last 10 s.
private let busyPSI = """
    some avg10=23.51 avg60=11.02 avg300=3.40 total=95532871
    full avg10=4.87 avg60=2.03 avg300=0.61 total=21477311

    """

/// The head of `/proc/meminfo` as read on the same idle machine (24 GB, 95 % available).
private let idleMeminfo = """
    MemTotal:       24684084 kB
    MemFree:        19987276 kB
    MemAvailable:   23526984 kB
    Buffers:           61188 kB
    Cached:          3426492 kB
    SwapCached:            0 kB
    Active:          1360644 kB
    Inactive:        2733072 kB

    """

/// A file written next to the test's fixture folder.
private func write(_ text: String, in fixture: SysfsFixture, _ name: String) throws -> String {
    let path = fixture.root + "/" + name
    try text.write(toFile: path, atomically: false, encoding: .utf8)
    return path
}

@Suite("Reading memory pressure and the thermal state (SPEC MEM-1, SCH-11)")
struct PressureReaderTests {
    let settings = MachinePressureSettings()

    @Test("MEM-1: PSI text parses into some and full lines; an idle machine is normal, a stalling one a warning, then critical past the full threshold")
    func psiLevels() throws {
        let idle = try #require(MemoryPressureReader.parsePSI(idlePSI))
        #expect(idle.some.avg10 == 0 && idle.full?.total == 0)
        #expect(MemoryPressureReader.level(of: idle, settings) == .normal)
        let busy = try #require(MemoryPressureReader.parsePSI(busyPSI))
        #expect(busy.some == .init(avg10: 23.51, avg60: 11.02, avg300: 3.40, total: 95_532_871))
        #expect(busy.full?.avg10 == 4.87)
        #expect(MemoryPressureReader.level(of: busy, settings) == .warning)

        var stalled = busy
        stalled.full?.avg10 = 12
        #expect(MemoryPressureReader.level(of: stalled, settings) == .critical, "full avg10 ≥ 10 %")
        stalled.full = nil
        stalled.some.avg10 = 45
        #expect(MemoryPressureReader.level(of: stalled, settings) == .critical, "some avg10 ≥ 40 %, no full line")
        var strict = settings
        strict.psiSomeWarning = 30
        #expect(MemoryPressureReader.level(of: busy, strict) == .normal, "the thresholds are settings")
    }

    @Test("MEM-1: malformed PSI text is not a reading: no some line, missing or negative fields, garbage")
    func psiMalformed() {
        #expect(MemoryPressureReader.parsePSI("") == nil)
        #expect(MemoryPressureReader.parsePSI("full avg10=1.00 avg60=0.00 avg300=0.00 total=3\n") == nil)
        #expect(MemoryPressureReader.parsePSI("some avg10=1.00 avg60=0.00 total=3\n") == nil)
        #expect(MemoryPressureReader.parsePSI("some avg10=-1 avg60=0.00 avg300=0.00 total=3\n") == nil)
        #expect(MemoryPressureReader.parsePSI("some avg10=nan avg60=0.00 avg300=0.00 total=3\n") == nil)
        #expect(MemoryPressureReader.parsePSI("\u{0}\u{1}binary") == nil)
    }

    @Test("MEM-1: without PSI, MemAvailable as a share of MemTotal: 95 % is normal, 8 % a warning, 4 % critical; no MemAvailable is no reading")
    func meminfoLevels() throws {
        let share = try #require(MemoryPressureReader.availableShare(idleMeminfo))
        #expect(abs(share - 95.31) < 0.01)
        #expect(MemoryPressureReader.level(availableShare: share, settings) == .normal)
        #expect(MemoryPressureReader.level(availableShare: 8, settings) == .warning)
        #expect(MemoryPressureReader.level(availableShare: 4, settings) == .critical)
        #expect(MemoryPressureReader.availableShare("MemTotal: 1000 kB\nMemFree: 10 kB\n") == nil, "kernels before 3.14")
        #expect(MemoryPressureReader.availableShare("MemTotal: 0 kB\nMemAvailable: 0 kB\n") == nil)
        #expect(MemoryPressureReader.availableShare("MemTotal: 1000 kB\nMemAvailable: 40 kB\n") == 4)
    }

    @Test("MEM-1: the reader takes PSI first, falls back to /proc/meminfo, and cannot tell (nil, the default normal) when neither reads")
    func readerFallsBack() throws {
        try SysfsFixture.with { fixture in
            let psi = try write(busyPSI, in: fixture, "memory")
            let meminfo = try write("MemTotal: 1000 kB\nMemAvailable: 30 kB\n", in: fixture, "meminfo")
            let missing = fixture.root + "/absent"
            #expect(MemoryPressureReader(psiPath: psi, meminfoPath: meminfo).read() == .warning)
            let fallback = MemoryPressureReader(psiPath: missing, meminfoPath: meminfo).reading()
            #expect(fallback.level == .critical && fallback.source.contains("no PSI"), "\(fallback)")
            let garbled = try write("nonsense\n", in: fixture, "garbled")
            #expect(MemoryPressureReader(psiPath: garbled, meminfoPath: meminfo).read() == .critical)
            let none = MemoryPressureReader(psiPath: missing, meminfoPath: missing).reading()
            #expect(none.level == nil && none.source.contains(missing), "\(none)")
        }
    }

    @Test("MEM-1: this machine: PSI or meminfo reads, and the level is one of the three")
    func thisMachine() {
        let reading = MemoryPressureReader().reading()
        #expect(reading.level != nil, "\(reading.source)")
    }

    @Test("SCH-11: a phone's CPU zone against its trip points: nominal, fair near the passive trip, serious past it, critical past the critical one")
    func thermalPhone() throws {
        // A PinePhone's cpu0-thermal (sun50i): two passive trips and a critical one.
        func phone(_ temperature: Int) throws -> ThermalState? {
            try SysfsFixture.with { fixture in
                try fixture.add(
                    "thermal_zone0",
                    attributes: [
                        "type": "cpu0-thermal", "temp": "\(temperature)", "mode": "enabled",
                        "trip_point_0_type": "passive", "trip_point_0_temp": "85000", "trip_point_0_hyst": "2000",
                        "trip_point_1_type": "passive", "trip_point_1_temp": "90000", "trip_point_1_hyst": "2000",
                        "trip_point_2_type": "critical", "trip_point_2_temp": "110000", "trip_point_2_hyst": "2000",
                    ])
                let reader = ThermalReader(root: fixture.root)
                #expect(reader.zones().first?.tripPoints.count == 3)
                return reader.read()
            }
        }
        #expect(try phone(41_250) == .nominal)
        #expect(try phone(81_000) == .fair, "within 5 °C of the passive trip")
        #expect(try phone(86_500) == .serious)
        #expect(try phone(106_000) == .serious, "within 5 °C of the critical trip")
        #expect(try phone(110_000) == .critical)
    }

    @Test("SCH-11: a laptop: the hottest zone decides; an active trip (fan) is fair; hot is critical; disabled trips (0) and unreadable zones are left out")
    func thermalLaptop() throws {
        try SysfsFixture.with { fixture in
            try fixture.add(
                "thermal_zone0",
                attributes: ["type": "acpitz", "temp": "52000", "trip_point_0_type": "critical", "trip_point_0_temp": "128000"])
            try fixture.add(
                "thermal_zone1",
                attributes: [
                    "type": "x86_pkg_temp", "temp": "66000", "trip_point_0_type": "passive", "trip_point_0_temp": "0",
                    "trip_point_1_type": "active", "trip_point_1_temp": "65000",
                ])
            try fixture.add("thermal_zone2", attributes: ["type": "iwlwifi_1"])  // no temp: the radio is off
            try fixture.add("cooling_device0", attributes: ["type": "Processor", "cur_state": "0"])
            let reader = ThermalReader(root: fixture.root)
            #expect(reader.zones().map(\.name) == ["thermal_zone0", "thermal_zone1"])
            #expect(reader.read() == .fair)
            try fixture.add(
                "thermal_zone3", attributes: ["type": "battery", "temp": "61000", "trip_point_0_type": "hot", "trip_point_0_temp": "60000"])
            #expect(reader.read() == .critical)
        }
        let zone = ThermalReader.Zone(
            name: "z", type: "t", temperature: 84_000, tripPoints: [.init(type: "passive", temperature: 85_000)])
        #expect(ThermalReader.state(of: zone, margin: 0) == .nominal, "the margin is a setting")
    }

    @Test("SCH-11: no thermal zones (a VM, a container, this machine) is nominal; zones none of which reads is no reading")
    func thermalNoZones() throws {
        try SysfsFixture.with { fixture in
            #expect(ThermalReader(root: fixture.root).read() == .nominal)
            #expect(ThermalReader(root: fixture.root + "/absent").read() == .nominal)
            try fixture.add("thermal_zone0", attributes: ["type": "cpu-thermal"])
            let reading = ThermalReader(root: fixture.root).reading()
            #expect(reading.state == nil && reading.source.contains("none of the 1 thermal zones"), "\(reading)")
        }
        #expect(ThermalReader().read() != nil)
    }

    @Test("MEM-1, SCH-11: the settings decode from the configuration file; bad values are refused naming the range")
    func settingsDecode() throws {
        func decode(_ json: String) throws -> MachinePressureSettings {
            try JSONDecoder().decode(MachinePressureSettings.self, from: Data(json.utf8))
        }
        #expect(try decode("{}") == MachinePressureSettings())
        let set = try decode(#"{"pollInterval": 0, "psiFullCritical": 20, "thermalMargin": 0}"#)
        #expect(set.pollInterval == 0 && set.psiFullCritical == 20 && set.thermalMargin == 0)
        #expect { try decode(#"{"psiSomeWarning": 120}"#) } throws: { "\($0)".contains("must be from 0 to 100") }
        #expect { try decode(#"{"pollInterval": 0.01}"#) } throws: { "\($0)".contains("at least 0.1 s") }
        #expect { try decode(#"{"psiSomeWarning": 50, "psiSomeCritical": 40}"#) } throws: { "\($0)".contains("psiSomeWarning") }
        #expect { try decode(#"{"availableWarning": 3}"#) } throws: { "\($0)".contains("availableWarning") }
    }

    @Test("MEM-1, SCH-11: the machine reader fills memory pressure and the thermal state from its sources")
    func machineReaderFillsPressure() throws {
        try SysfsFixture.with { fixture in
            let psi = try write(idlePSI, in: fixture, "memory")
            let thermal = fixture.root + "/thermal"
            try FileManager.default.createDirectory(atPath: thermal, withIntermediateDirectories: true)
            let reader = MachineConditionsReader(
                power: PowerSupplyReader(root: fixture.root + "/none"), network: NetworkReader(root: fixture.root + "/none"),
                memory: MemoryPressureReader(psiPath: psi, meminfoPath: nil), thermal: ThermalReader(root: thermal))
            let reading = reader.read()
            #expect(reading.memoryPressure == .normal && reading.thermalState == .nominal)
            try busyPSI.write(toFile: psi, atomically: false, encoding: .utf8)
            var again = reading
            reader.readPressure(into: &again)
            #expect(again.memoryPressure == .warning && again.network == reading.network)
        }
    }
}

@Suite("Polling memory pressure and the thermal state (SPEC MEM-1, SCH-11)")
struct PressurePollingTests {
    /// A reader of the PSI file `psi` alone: no power supply, no network, and (with `thermal`) no thermal zones.
    static func psiOnly(_ fixture: SysfsFixture, _ psi: String, thermal: Bool = false) -> MachineConditionsReader {
        MachineConditionsReader(
            power: PowerSupplyReader(root: fixture.root + "/none"),
            network: NetworkReader(root: fixture.root + "/none", addresses: .notRequired),
            memory: MemoryPressureReader(psiPath: psi, meminfoPath: nil),
            thermal: thermal ? ThermalReader(root: fixture.root + "/none") : nil)
    }

    @Test("MEM-1: with a poll interval, a change of the PSI file alone is read and handed on without any kernel message; power and network stay as read")
    func pollsPressure() throws {
        try SysfsFixture.with { fixture in
            let psi = fixture.root + "/memory"
            try idlePSI.write(toFile: psi, atomically: false, encoding: .utf8)
            let readings = Mutex<[MachineReading]>([])
            let reader = Self.psiOnly(fixture, psi, thermal: true)
            let watcher = try MachineConditionsWatcher(reader: reader, pressurePollInterval: 0.1) { reading in
                readings.withLock { $0.append(reading) }
            }
            defer { watcher.shutdown() }
            watcher.readPressure(true)
            #expect(watcher.current.memoryPressure == .normal && watcher.current.thermalState == .nominal)
            try busyPSI.write(toFile: psi, atomically: false, encoding: .utf8)
            #expect(ProcessFixtures.eventually { watcher.current.memoryPressure == .warning })
            let handed = readings.withLock { $0 }
            #expect(handed.last?.memoryPressure == .warning && handed.last?.network == NetworkKind.none, "\(handed)")
        }
    }

    @Test("SCH-11, §11 idle: the interval reads pressure only while the daemon wants it — not before (a change is not read), at once and then at the interval when wanted, and no more once unwanted")
    func pollsOnlyWhileWanted() throws {
        try SysfsFixture.with { fixture in
            let psi = fixture.root + "/memory"
            try idlePSI.write(toFile: psi, atomically: false, encoding: .utf8)
            let reader = Self.psiOnly(fixture, psi)
            let watcher = try MachineConditionsWatcher(reader: reader, pressurePollInterval: 0.1) { _ in }
            defer { watcher.shutdown() }
            try busyPSI.write(toFile: psi, atomically: false, encoding: .utf8)
            // Three intervals with nothing wanting pressure: no reading, so the change is not seen.
            Thread.sleep(forTimeInterval: 0.3)
            #expect(watcher.pressureReadCount == 0)
            #expect(watcher.current.memoryPressure == .normal)
            watcher.readPressure(true)
            #expect(ProcessFixtures.eventually { watcher.current.memoryPressure == .warning })
            #expect(ProcessFixtures.eventually { watcher.pressureReadCount >= 3 }, "read at once, then every 0.1 s")
            watcher.readPressure(false)
            // A reading already under way when the wish changed may still finish; none after it.
            Thread.sleep(forTimeInterval: 0.05)
            let stopped = watcher.pressureReadCount
            try idlePSI.write(toFile: psi, atomically: false, encoding: .utf8)
            Thread.sleep(forTimeInterval: 0.3)
            #expect(watcher.pressureReadCount == stopped, "no reading at the interval once unwanted")
            #expect(watcher.current.memoryPressure == .warning)
        }
    }

    @Test("MEM-1: a pressure source that disappears leaves the condition unknown (the core's default), without stopping the watcher")
    func vanishingSource() throws {
        try SysfsFixture.with { fixture in
            let psi = fixture.root + "/memory"
            try busyPSI.write(toFile: psi, atomically: false, encoding: .utf8)
            let reader = Self.psiOnly(fixture, psi)
            let watcher = try MachineConditionsWatcher(reader: reader, pressurePollInterval: 0.1) { _ in }
            defer { watcher.shutdown() }
            watcher.readPressure(true)
            #expect(watcher.current.memoryPressure == .warning)
            try FileManager.default.removeItem(atPath: psi)
            #expect(ProcessFixtures.eventually { watcher.current.memoryPressure == nil })
            try idlePSI.write(toFile: psi, atomically: false, encoding: .utf8)
            #expect(ProcessFixtures.eventually { watcher.current.memoryPressure == .normal })
        }
    }
}
