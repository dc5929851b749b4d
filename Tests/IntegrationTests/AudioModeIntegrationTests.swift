import Foundation
import OffstageProtocol
import TestProcesses
import Testing

/// SPEC MODE-1 on the real daemon with the real `Player` example: real processes, real audio to a real sound server
/// where one can run, the paced null output otherwise.
@Suite("Audio in the background on the real daemon (SPEC MODE-1)", .serialized)
struct AudioModeIntegrationTests {
    static let player = "com.example.player"

    /// Installs the player with its playlist, the `audio` mode unless told otherwise, and the given arguments and
    /// environment (the null output unless a sound server is given).
    static func installPlayer(
        _ daemon: DaemonHarness, modes: [String] = ["audio"], arguments: [String] = [], environment: [String: String] = [:]
    ) throws {
        let linux: [String: Any] = [
            "Arguments": arguments, "Environment": environment.isEmpty ? ["OFFSTAGE_AUDIO_OUTPUT": "null"] : environment,
        ]
        try daemon.install(
            "Player", id: player, ["UIBackgroundModes": modes, "OffstageLinux": linux], resources: ["Playlist"])
    }

    /// Opens the player and waits until it plays.
    static func openAndPlay(_ daemon: DaemonHarness) throws -> Int32 {
        try daemon.ok("open", player)
        try daemon.waitFor(player, "active")
        try daemon.waitUntil("the player plays") { daemon.output(player).contains("playing 01-") }
        return try #require(try daemon.app(player).pid)
    }

    @Test("MODE-1: the player's CPU time advances in the background while it plays, and stops once it is paused")
    func playsOnInTheBackgroundThenSuspended() throws {
        try withDaemon { daemon in
            try Self.installPlayer(daemon, arguments: ["--sleep-timer", "4"])
            let pid = try Self.openAndPlay(daemon)
            try daemon.ok("home")
            usleep(700_000)
            let app = try daemon.app(Self.player)
            #expect(app.state == "background")
            #expect(app.activeModes == ["audio"])
            #expect(app.modeHolds.first?.hasPrefix("audio: playing (playback)") == true)
            let cpu = ProcessProbe.cpuNanoseconds(pid)
            usleep(800_000)
            #expect(ProcessProbe.cpuNanoseconds(pid) > cpu, "the player writes audio in the background")
            #expect(!ProcessProbe.isFrozen(pid))
            // The sleep timer pauses it: then it is suspended, really frozen.
            try daemon.waitFor(Self.player, "suspended", timeout: 10)
            #expect(daemon.output(Self.player).contains("paused: sleep timer"))
            #expect(ProcessProbe.isFrozen(pid))
            let frozenCPU = ProcessProbe.cpuNanoseconds(pid)
            usleep(400_000)
            #expect(ProcessProbe.cpuNanoseconds(pid) == frozenCPU)
            let suspended = try daemon.app(Self.player)
            #expect(suspended.activeModes.isEmpty)
            #expect(suspended.suspendedBecause?.contains("nothing kept it running") == true)
            let modeLog = try daemon.log(Self.player).filter { $0.kind == "mode" }.map(\.message)
            #expect(modeLog.contains { $0.hasPrefix("audio playing") } && modeLog.contains("audio stopped"))
        }
    }

    @Test("MODE-1: sound really reaches the sound server while the app is in the background")
    func soundContinuesInTheBackground() throws {
        let server: PulseAudioServer
        do {
            server = try PulseAudioServer.start()
        } catch {
            // Said, not skipped silently: the other tests here cover the null output the player falls back to.
            print("PulseAudio could not start (\(error)); the null-output path is tested instead")
            try withDaemon { daemon in
                try Self.installPlayer(daemon)
                _ = try Self.openAndPlay(daemon)
                try daemon.waitUntil("the player says where its sound goes") { daemon.output(Self.player).contains("output: ") }
                #expect(daemon.output(Self.player).contains("output: null output"))
            }
            return
        }
        defer { server.stop() }
        try withDaemon { daemon in
            try Self.installPlayer(daemon, environment: ["PULSE_SERVER": server.address])
            let pid = try Self.openAndPlay(daemon)
            try daemon.waitUntil("the player says where its sound goes") { daemon.output(Self.player).contains("output: ") }
            #expect(daemon.output(Self.player).contains("output: PulseAudio"), "\(daemon.output(Self.player))")
            try daemon.ok("home")
            try daemon.waitUntil("the player is in the background") { try daemon.app(Self.player).state == "background" }
            try server.startRecording()
            usleep(1_500_000)
            let sound = try server.stopRecording().measure()
            #expect(try daemon.app(Self.player).state == "background")
            #expect(!ProcessProbe.isFrozen(pid))
            #expect(sound.maxAmplitude > 0.1, "the recording of the sink is not silence: \(sound)")
        }
    }

    @Test("MODE-6: without the `audio` mode the player is suspended though it plays, and `apps` says why")
    func undeclaredModeGivesNoBackgroundTime() throws {
        try withDaemon { daemon in
            try Self.installPlayer(daemon, modes: [])
            let pid = try Self.openAndPlay(daemon)
            #expect(daemon.output(Self.player).contains("'audio' is not in UIBackgroundModes"), "the SDK warns at once")
            try daemon.ok("home")
            try daemon.waitFor(Self.player, "suspended", timeout: 5)
            #expect(ProcessProbe.isFrozen(pid))
            let app = try daemon.app(Self.player)
            #expect(app.suspendedBecause?.contains("'audio' is not in UIBackgroundModes") == true, "\(app)")
            let explained = try daemon.ok("explain", Self.player)
            #expect(explained.contains("suspended: no mode may keep it running"), "\(explained)")
        }
    }

    @Test("MODE-1, CLI-1: an audio interruption pauses and suspends the player; its end wakes it and it plays again")
    func interruptionFromTheCLI() throws {
        try withDaemon { daemon in
            try Self.installPlayer(daemon)
            let pid = try Self.openAndPlay(daemon)
            try daemon.ok("home")
            try daemon.waitUntil("the player plays in the background") {
                try daemon.app(Self.player).activeModes == ["audio"]
            }
            let began = try JSONDecoder().decode(
                ModesControlInterface.AudioSessionsReply.self,
                from: Data(try daemon.ok("--json", "audio", "interrupt", "--begin").utf8))
            #expect(began.interruption)
            #expect(began.sessions.first?.interruptedBy?.contains("incoming call") == true)
            try daemon.waitFor(Self.player, "suspended", timeout: 5)
            #expect(daemon.output(Self.player).contains("interruption began"))
            try daemon.ok("audio", "interrupt", "--end")
            try daemon.waitUntil("the player plays again in the background") {
                try daemon.app(Self.player).activeModes == ["audio"]
            }
            #expect(!ProcessProbe.isFrozen(pid))
            #expect(daemon.output(Self.player).contains("interruption ended"))
            let sessions = try daemon.ok("audio")
            #expect(sessions.contains(Self.player) && sessions.contains("playback"), "\(sessions)")
        }
    }

    @Test("MODE-1: bad audio input gets a clear error and changes nothing")
    func badInput() throws {
        try withDaemon { daemon in
            // The CLI: neither or both flags, and ending an interruption that never began.
            let neither = try daemon.cli(["audio", "interrupt"])
            #expect(neither.status != 0 && neither.stderr.contains("--begin or --end"))
            let noInterruption = try daemon.cli(["audio", "interrupt", "--end"])
            #expect(noInterruption.status != 0)
            #expect(noInterruption.stderr.contains("no audio interruption is in progress"), "\(noInterruption.stderr)")
            #expect(noInterruption.stderr.contains("--begin"))
            // The app interface, from a process that is no app: who calls is checked first, as for every app call
            // (an app's bad parameters: OffstageHostTests).
            let client = try RawClient(path: daemon.socket)
            defer { client.close() }
            client.send(#"{"method":"io.offstage.Modes.SetAudioSession","parameters":{"session":{"category":"loud","mixWithOthers":false,"active":true}}}"#)
            #expect(client.receive()?["error"] as? String == "io.offstage.Modes.NotAnApp")
            client.send(#"{"method":"io.offstage.Modes.SetAudioPlaying","parameters":{"playing":"yes"}}"#)
            #expect(client.receive()?["error"] as? String == "io.offstage.Modes.NotAnApp")
            let sessions = try JSONDecoder().decode(
                ModesControlInterface.AudioSessionsReply.self, from: Data(try daemon.ok("--json", "audio", "sessions").utf8))
            #expect(sessions.sessions.isEmpty && !sessions.interruption)
        }
    }
}
