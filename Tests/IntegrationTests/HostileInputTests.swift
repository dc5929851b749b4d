import Foundation
import OffstageProtocol
import Testing

/// Input chosen to stop the daemon — numbers no instant holds, files that never end — gets a clear error, and the
/// daemon goes on answering everyone (SPEC §11: malformed input on every interface gets a clear error and changes
/// nothing). Each test here began as a reproduction of a way the daemon was stopped or stalled.
@Suite("Hostile input on the real daemon (SPEC §11)", .serialized)
struct HostileInputTests {
    static let phone = "com.example.hostile.phone"

    /// The daemon process is still the one started, and answers a new connection.
    static func expectAlive(_ daemon: DaemonHarness, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(daemon.daemon?.isRunning == true, "the daemon is still running", sourceLocation: sourceLocation)
        let client = try RawClient(path: daemon.socket)
        defer { client.close() }
        let reply = try client.call("io.offstage.Control.Status")
        #expect(reply["error"] == nil, "the daemon answers: \(reply)", sourceLocation: sourceLocation)
    }

    @Test("§11, MODE-2: a voip app's keep-alive timeout of ±1e308 s or a date in seconds is refused by name; the daemon lives")
    func keepAliveTimeoutOutOfRange() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.phone, ["UIBackgroundModes": ["voip"]])
            try daemon.ok("open", Self.phone)
            try daemon.waitFor(Self.phone, "active")
            let before = try daemon.ok("--json", "voip", "apps")
            let values: [Double] = [1e308, -1e308, 253_402_300_800]
            let replies = try daemon.callAsApp(
                Self.phone, values.map { ("io.offstage.Modes.SetKeepAliveTimeout", ["seconds": $0]) })
            for (value, reply) in zip(values, replies) {
                #expect(reply["error"] as? String == "io.offstage.Modes.InvalidArgument", "\(value): \(reply)")
                let parameters = reply["parameters"] as? [String: Any]
                let fix = parameters?["fix"] as? String ?? ""
                #expect(fix.contains("600"), "the fix gives the range: \(reply)")
            }
            try Self.expectAlive(daemon)
            #expect(try daemon.ok("--json", "voip", "apps") == before, "no keep-alive was set")
            #expect(try daemon.app(Self.phone).state == "active")
        }
    }

    @Test("§11, SCH-8: explain --history since ±1e300, or 99999999999999 days back, is refused by name; the daemon lives")
    func historySinceOutOfRange() throws {
        try withDaemon { daemon in
            try daemon.install("RefreshApp", id: Self.phone)
            let client = try RawClient(path: daemon.socket)
            defer { client.close() }
            for since in [1e300, -1e300] {
                let reply = try client.call("io.offstage.Control.ExplainHistory", ["app": Self.phone, "since": since])
                #expect(reply["error"] as? String == "org.varlink.service.InvalidParameter", "\(reply)")
                let parameters = reply["parameters"] as? [String: Any]
                #expect(parameters?["parameter"] as? String == "since")
                #expect((parameters?["description"] as? String)?.contains("seconds since the Unix epoch from") == true)
            }
            let far = try daemon.cli(["explain", Self.phone, "--history", "--since", "99999999999999d"])
            #expect(far.status == 64, "a usage error, not a dead daemon (69): \(far)")
            #expect(far.stderr.contains("--since"), "the message names the option: \(far.stderr)")
            try Self.expectAlive(daemon)
            #expect(try daemon.ok("explain", Self.phone, "--history").contains(Self.phone))
        }
    }

    @Test("§11, MODE-3: a track that is too large, a FIFO or a device is refused at once without reading it")
    func replayOfFilesThatAreNotTracks() throws {
        try withDaemon { daemon in
            let large = daemon.root.appendingPathComponent("large.nmea").path
            #expect(FileManager.default.createFile(atPath: large, contents: Data("$GPRMC\n".utf8)))
            #expect(truncate(large, 2 << 30) == 0, "a sparse 2 GiB file")
            let fifo = daemon.root.appendingPathComponent("track.fifo").path
            #expect(mkfifo(fifo, 0o600) == 0)
            let client = try RawClient(path: daemon.socket)
            defer { client.close() }
            let before = try client.call("io.offstage.ModesControl.Location")
            for (path, problem) in [
                (large, "is larger than 67108864 bytes"), (fifo, "is not a regular file"),
                ("/dev/zero", "is not a regular file"), (daemon.root.path, "is not a regular file"),
            ] {
                let reply = try client.call("io.offstage.ModesControl.ReplayTrack", ["path": path])
                #expect(reply["error"] as? String == "io.offstage.ModesControl.BadTrack", "\(path): \(reply)")
                let message = (reply["parameters"] as? [String: Any])?["message"] as? String ?? ""
                #expect(message.contains(problem), "\(path): \(message)")
            }
            let slow = try client.call("io.offstage.ModesControl.ReplayTrack", ["path": large, "speed": 1e300])
            #expect(slow["error"] as? String == "io.offstage.ModesControl.InvalidArgument", "\(slow)")
            #expect(String(describing: slow).contains("from 0.01 to 100000"))
            let after = try client.call("io.offstage.ModesControl.Location")
            #expect(NSDictionary(dictionary: before).isEqual(to: after), "the source did not change")
            try Self.expectAlive(daemon)
        }
    }

    @Test("§11, MODE-3: while a large track is read, every other caller is answered")
    func replayReadsOffTheLoop() throws {
        var settings = DaemonHarness.fastTimings
        settings["location"] = ["maximumTrackBytes": .int(1 << 30)]
        try withDaemon(settings: settings) { daemon in
            // 256 MiB of zeros (sparse): read in whole, then refused as no track. Reading it takes long enough that the
            // status call sent after it is answered first, unless the read holds the loop.
            let large = daemon.root.appendingPathComponent("zeros.gpx").path
            #expect(FileManager.default.createFile(atPath: large, contents: nil))
            #expect(truncate(large, 256 << 20) == 0)
            let replay = try RawClient(path: daemon.socket)
            defer { replay.close() }
            replay.send(#"{"method":"io.offstage.ModesControl.ReplayTrack","parameters":{"path":"\#(large)"}}"#)
            let other = try RawClient(path: daemon.socket)
            defer { other.close() }
            let status = try other.call("io.offstage.Control.Status")
            #expect(status["error"] == nil)
            #expect(!replay.hasReply(), "the replay was still being read when the status was answered")
            let refused = replay.receive()
            #expect(refused?["error"] as? String == "io.offstage.ModesControl.BadTrack", "\(String(describing: refused))")
            try Self.expectAlive(daemon)
        }
    }
}
