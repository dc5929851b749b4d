import Foundation
@testable import OffstageDaemon
import Testing

/// Reading the machine's time zone (SPEC NT-1: the device's zone follows it), from files a test lays out.
@Suite("The machine's time zone")
struct MachineTimeZoneTests {
    func withEtc(_ body: (String) throws -> Void) throws {
        let etc = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-etc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: etc) }
        try body(etc)
    }

    @Test("NT-1: the zone is the name /etc/localtime links to, under zoneinfo (posix/ and right/ copies too)")
    func localtimeLink() throws {
        try withEtc { etc in
            try FileManager.default.createSymbolicLink(atPath: etc + "/localtime", withDestinationPath: "/usr/share/zoneinfo/Europe/Berlin")
            #expect(MachineTimeZone(etc: etc, environment: [:]).identifier == "Europe/Berlin")
            try FileManager.default.removeItem(atPath: etc + "/localtime")
            try FileManager.default.createSymbolicLink(atPath: etc + "/localtime", withDestinationPath: "../usr/share/zoneinfo/posix/Asia/Tokyo")
            #expect(MachineTimeZone(etc: etc, environment: [:]).identifier == "Asia/Tokyo")
        }
    }

    @Test("NT-1: TZ naming a zone comes first; /etc/timezone is read when there is no link; nonsense is passed over")
    func order() throws {
        try withEtc { etc in
            try "America/New_York\n".write(toFile: etc + "/timezone", atomically: true, encoding: .utf8)
            #expect(MachineTimeZone(etc: etc, environment: [:]).identifier == "America/New_York")
            #expect(MachineTimeZone(etc: etc, environment: ["TZ": ":Europe/Paris"]).identifier == "Europe/Paris")
            #expect(MachineTimeZone(etc: etc, environment: ["TZ": "Mars/Olympus"]).identifier == "America/New_York")
            try FileManager.default.createSymbolicLink(atPath: etc + "/localtime", withDestinationPath: "/nowhere/Nonsense")
            #expect(MachineTimeZone(etc: etc, environment: [:]).identifier == "America/New_York")
        }
    }

    @Test("NT-1: a name is a time zone only if the calendar knows it")
    func validation() {
        #expect(MachineTimeZone.validated("Europe/Berlin") == "Europe/Berlin")
        #expect(MachineTimeZone.validated("right/Europe/Berlin") == "Europe/Berlin")
        for bad in ["", "Mars/Olympus", "/etc/passwd", String(repeating: "A", count: 100)] {
            #expect(MachineTimeZone.validated(bad) == nil, "\(bad)")
        }
    }
}
