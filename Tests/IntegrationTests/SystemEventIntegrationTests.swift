import Foundation
import OffstageProtocol
import Testing

/// SPEC LC-4's system events on the real daemon, heard by the real `Player` example.
@Suite("System events on the real daemon (SPEC LC-4)", .serialized)
struct SystemEventIntegrationTests {
    @Test("LC-4: a suspended app hears each system event once, before anything else, when it runs again")
    func coalescedUntilTheAppRuns() throws {
        try withDaemon { daemon in
            let player = AudioModeIntegrationTests.player
            try AudioModeIntegrationTests.installPlayer(daemon, arguments: ["--sleep-timer", "1"])
            let pid = try AudioModeIntegrationTests.openAndPlay(daemon)
            try daemon.ok("home")
            try daemon.waitFor(player, "suspended", timeout: 10)
            for kind in ["network-change", "battery-level-change", "network-change"] {
                let posted = try JSONDecoder().decode(
                    ModesControlInterface.SystemEventReply.self, from: Data(try daemon.ok("--json", "system-event", kind).utf8))
                #expect(posted.apps == 1)
            }
            usleep(300_000)
            #expect(ProcessProbe.isFrozen(pid), "nothing thaws the app for a system event")
            #expect(!daemon.output(player).contains("system event"))
            try daemon.ok("open", player, "--wait", "10")
            try daemon.waitUntil("the player heard the events") { daemon.output(player).contains("did-become-active\n") }
            let lines = daemon.output(player).split(separator: "\n").map { String($0.split(separator: " ", maxSplits: 1).last ?? "") }
            let tail = Array(lines.drop { $0 != "system event: network-change" })
            #expect(tail.prefix(3) == ["system event: network-change", "system event: battery-level-change", "will-enter-foreground"], "\(tail)")
            #expect(lines.filter { $0 == "system event: network-change" }.count == 1)
        }
    }

    @Test("LC-4, CLI-1: an unknown system event is refused, naming the kinds there are")
    func unknownKind() throws {
        try withDaemon { daemon in
            let refused = try daemon.cli(["system-event", "meteor-strike"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("'meteor-strike' is not a system event"), "\(refused.stderr)")
            #expect(refused.stderr.contains("significant-time-change"))
        }
    }
}
