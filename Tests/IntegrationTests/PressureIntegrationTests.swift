import Foundation
import OffstageProtocol
import Testing

/// SPEC SCH-11, MEM-1, SET-1 on the real daemon: memory pressure and the thermal state are device conditions read
/// from the machine and overridable with `offstage device`; critical memory pressure ends the continued-processing
/// task of the real `Exporter` that reported the least progress, and `auto` returns to the machine's reading.
@Suite("Memory and thermal pressure on the real daemon (SPEC SCH-11, MEM-1)", .serialized)
struct PressureIntegrationTests {
    typealias Exports = ContinuedProcessingIntegrationTests

    static func device(_ daemon: DaemonHarness) throws -> ControlInterface.DeviceReply {
        try JSONDecoder().decode(ControlInterface.DeviceReply.self, from: Data(try daemon.ok("--json", "device").utf8))
    }

    @Test("SCH-11, MEM-1: `offstage device --memory-pressure critical` ends the export with the least progress, the log naming memory pressure; the other finishes; `auto` returns to the machine's reading")
    func memoryPressureEndsTheExportWithLeastProgress() throws {
        let fast = Exports.exporter
        let slow = "com.example.exporter-slow"
        // Continued processing's own answer alone: the apps' grace after the memory warning outlasts the test, so the
        // response ends no app (MemoryResponseTests and MemoryPressureIntegrationTests show that part).
        var settings = Exports.settings
        settings["memory"] = .object(["warningGrace": .number(3_600)])
        try withDaemon(settings: settings) { daemon in
            // The machine's own reading, before anything is set by hand.
            let machine = try Self.device(daemon)
            let machineLevel = try #require(machine.machine.memoryPressure, "this machine has PSI or /proc/meminfo")
            #expect(machine.conditions.memoryPressure == machineLevel && machine.overrides.memoryPressure == nil)
            #expect(machineLevel != "critical", "the test needs a machine not already short of memory")

            // Two slots (the default). The fast export starts first and moves three times as fast.
            try Exports.install(daemon, id: fast, items: 80, itemMilliseconds: 100)
            try Exports.install(daemon, id: slow, items: 80, itemMilliseconds: 300)
            try Exports.openAndSubmit(daemon, fast)
            try daemon.waitUntil("the fast export started") { daemon.output(fast).contains("export started") }
            try Exports.openAndSubmit(daemon, slow)
            try daemon.waitUntil("the slow export started") { daemon.output(slow).contains("export started") }
            try daemon.ok("home")
            try daemon.waitUntil("both exports run and report progress") {
                let tasks = try daemon.apps().filter { [fast, slow].contains($0.id) }.flatMap(\.continuedTasks)
                return tasks.count == 2 && tasks.allSatisfy { $0.state == "running" && $0.completed >= 1 }
            }

            let table = try daemon.ok("device", "--memory-pressure", "critical")
            #expect(table.contains("memory-pressure") && table.contains("critical") && table.contains("set by hand"), "\(table)")
            try daemon.waitUntil("the slow export's expiration handler ran") { daemon.output(slow).contains("export expired at") }
            try daemon.waitUntil("the slow export ended") { try Exports.done(daemon, slow) != nil }
            let ended = try #require(try Exports.done(daemon, slow))
            #expect(
                ended.contains("failed after")
                    && ended.contains("ended under pressure (memory pressure is critical): it reported the least progress (")
                    && ended.contains("of the 2 running"), "\(ended)")
            #expect(try daemon.log().contains { $0.kind == "device" && $0.message.contains("memory pressure critical (set by hand)") })

            // The fast one keeps the one slot left under pressure and finishes every item.
            #expect(!daemon.output(fast).contains("export expired"))
            try daemon.waitUntil("the fast export finished", timeout: 15) { try Exports.done(daemon, fast) != nil }
            #expect(try Exports.done(daemon, fast)?.contains("succeeded after") == true)
            #expect(Exports.exported(daemon, fast).count == 80)
            let slowStoppedAt = try #require(Exports.expiredAt(daemon.output(slow)))
            #expect(slowStoppedAt < 80 && Exports.exported(daemon, slow).count == slowStoppedAt)

            // auto: the machine's reading is in charge again.
            try daemon.ok("device", "--memory-pressure", "auto")
            let back = try Self.device(daemon)
            #expect(back.overrides.memoryPressure == nil, "\(back.overrides)")
            #expect(back.machine.memoryPressure != nil && back.conditions.memoryPressure == back.machine.memoryPressure)
            let shown = try daemon.ok("device")
            #expect(shown.contains("machine: \(back.conditions.memoryPressure)"), "\(shown)")
        }
    }

    @Test("SCH-11: `--thermal serious` is shown as set by hand in the table and in --json; `auto` returns to the machine (no thermal zones here: nominal)")
    func thermalOverrideShownAndCleared() throws {
        try withDaemon { daemon in
            let table = try daemon.ok("device", "--thermal", "serious")
            let row = try #require(table.split(separator: "\n").first { $0.hasPrefix("thermal") })
            #expect(row.contains("serious") && row.contains("set by hand"), "\(table)")
            let set = try Self.device(daemon)
            #expect(set.conditions.thermalState == "serious" && set.overrides.thermalState == "serious")
            let json = try daemon.ok("--json", "device")
            #expect(json.contains(#""thermalState""#) && json.contains(#""memoryPressure""#), "\(json)")

            try daemon.ok("device", "--thermal", "auto")
            let back = try Self.device(daemon)
            #expect(back.overrides.thermalState == nil)
            #expect(back.conditions.thermalState == (back.machine.thermalState ?? "nominal"))
            let shown = try daemon.ok("device")
            let thermalRow = try #require(shown.split(separator: "\n").first { $0.hasPrefix("thermal") })
            #expect(thermalRow.contains("machine"), "\(shown)")
        }
    }

    @Test("SCH-11, CLI: an unknown level is refused naming the option and the accepted values (exit 64); nothing changes; --help describes both options")
    func badLevelsAreRefused() throws {
        try withDaemon { daemon in
            let before = try Self.device(daemon)
            let memory = try daemon.cli(["device", "--memory-pressure", "high"])
            #expect(memory.status == 64, "\(memory)")
            #expect(
                memory.stderr.contains("--memory-pressure") && memory.stderr.contains("high")
                    && ["normal", "warning", "critical", "auto"].allSatisfy(memory.stderr.contains), "\(memory.stderr)")
            let thermal = try daemon.cli(["device", "--thermal", "hot", "--charging", "off"])
            #expect(thermal.status == 64, "\(thermal)")
            #expect(
                thermal.stderr.contains("--thermal") && thermal.stderr.contains("hot")
                    && ["nominal", "fair", "serious", "critical", "auto"].allSatisfy(thermal.stderr.contains), "\(thermal.stderr)")
            let empty = try daemon.cli(["device", "--thermal", ""])
            #expect(empty.status == 64, "\(empty)")
            #expect(try Self.device(daemon) == before, "nothing changed, not even the valid --charging off")

            let help = try daemon.ok("device", "--help")
            #expect(help.contains("--memory-pressure <normal|warning|critical|auto>") && help.contains("PSI"), "\(help)")
            #expect(help.contains("--thermal <nominal|fair|serious|critical|auto>") && help.contains("thermal zones"), "\(help)")
        }
    }
}
