import Foundation
import OffstageProtocol
import Testing

/// SPEC MODE-3 on the real daemon with the real `Tracker` example: real processes, a fixed position moved from the
/// CLI as the source, frozen and thawed for real.
@Suite("Location in the background on the real daemon (SPEC MODE-3)", .serialized)
struct LocationModeIntegrationTests {
    static let tracker = "com.example.tracker"

    /// Installs the tracker with the given modes (the `location` mode by default) and arguments.
    static func installTracker(_ daemon: DaemonHarness, modes: [String] = ["location"], arguments: [String] = []) throws {
        try daemon.install("Tracker", id: tracker, ["UIBackgroundModes": modes, "OffstageLinux": ["Arguments": arguments]])
    }

    /// How many locations the tracker printed.
    static func locationLines(_ daemon: DaemonHarness) -> Int {
        daemon.output(tracker).components(separatedBy: "\n").filter { $0.contains(" location <") }.count
    }

    /// Opens the tracker at a fixed position and waits for its first location.
    static func openTracker(_ daemon: DaemonHarness) throws {
        _ = try daemon.ok("location", "set", "48", "11")
        try daemon.ok("open", tracker)
        try daemon.waitFor(tracker, "active")
        try daemon.waitUntil("the tracker has a location") { locationLines(daemon) >= 1 }
    }

    @Test("MODE-3: with the `location` mode the tracker keeps receiving locations in the background")
    func receivesInTheBackground() throws {
        try withDaemon { daemon in
            try Self.installTracker(daemon)
            try Self.openTracker(daemon)
            try daemon.ok("home")
            usleep(600_000)
            let app = try daemon.app(Self.tracker)
            #expect(app.state == "background")
            #expect(app.activeModes == ["location"])
            _ = try daemon.ok("location", "set", "48.001", "11")
            try daemon.waitUntil("the tracker hears of the move in the background") {
                daemon.output(Self.tracker).contains("travelled 111 m")
            }
            let shown = try daemon.ok("--json", "location")
            let reply = try JSONDecoder().decode(ModesControlInterface.LocationReply.self, from: Data(shown.utf8))
            #expect(reply.kind == "fixed" && reply.lastFix?.latitude == 48.001)
            #expect(reply.apps.map(\.app) == [Self.tracker] && reply.apps.first?.allowsBackground == true)
            #expect(reply.apps.first?.hold == "location: receiving location updates")
            #expect(try daemon.ok("location").contains("every 0 m, background"))
        }
    }

    @Test("MODE-6: without the mode the tracker is told why, is suspended, gets nothing while frozen, and `apps` says why")
    func withoutTheModeSuspended() throws {
        try withDaemon { daemon in
            try Self.installTracker(daemon, modes: [])
            try Self.openTracker(daemon)
            #expect(daemon.output(Self.tracker).contains("add 'location' to UIBackgroundModes"))
            let pid = try #require(try daemon.app(Self.tracker).pid)
            try daemon.ok("home")
            try daemon.waitFor(Self.tracker, "suspended")
            #expect(ProcessProbe.isFrozen(pid))
            let why = try #require(try daemon.app(Self.tracker).suspendedBecause)
            #expect(why.contains("'location' is not in UIBackgroundModes"), "\(why)")
            let before = Self.locationLines(daemon)
            _ = try daemon.ok("location", "set", "48.001", "11")
            usleep(500_000)
            #expect(Self.locationLines(daemon) == before, "nothing is delivered while it is frozen")
            #expect(try daemon.app(Self.tracker).state == "suspended")
        }
    }

    @Test("MODE-3, LC-6: a significant change launches a terminated and a force-quit tracker (launch reason location)")
    func significantChangeRelaunches() throws {
        try withDaemon { daemon in
            try Self.installTracker(daemon)
            try Self.openTracker(daemon)
            // Terminated: the process is killed (by its pid, which the daemon started for this test).
            let pid = try #require(try daemon.app(Self.tracker).pid)
            kill(pid, SIGKILL)
            try daemon.waitFor(Self.tracker, "notRunning")
            _ = try daemon.ok("location", "set", "48.006", "11")
            try daemon.waitUntil("the tracker is launched for the move") { (try? daemon.app(Self.tracker).launchReason) == "location" }
            try daemon.waitUntil("the relaunched tracker gets the location") {
                daemon.output(Self.tracker).contains("did-finish-launching (location)") && Self.locationLines(daemon) >= 2
            }
            // Force-quit: still launched for a significant change, and still marked force-quit.
            try daemon.ok("force-quit", Self.tracker)
            try daemon.waitFor(Self.tracker, "notRunning")
            _ = try daemon.ok("location", "set", "48.012", "11")
            try daemon.waitUntil("the force-quit tracker is launched for the move") {
                let app = try daemon.app(Self.tracker)
                return app.launchReason == "location" && app.pid != nil && app.pid != pid
            }
            #expect(try daemon.app(Self.tracker).forceQuit)
            #expect(try daemon.log(Self.tracker).contains { $0.message.contains("a significant change") })
        }
    }

    @Test("MODE-3 bad input: a bad track names the file, line and fix and keeps the source; out-of-range latitude; foreign callers")
    func badInput() throws {
        try withDaemon { daemon in
            _ = try daemon.ok("location", "set", "48", "11")
            let track = daemon.root.appendingPathComponent("bad.gpx")
            try Data("<gpx>\n<trk><trkseg>\n<trkpt lat=\"95\" lon=\"11\"></trkpt>\n</trkseg></trk></gpx>\n".utf8).write(to: track)
            let replay = try daemon.cli(["location", "replay", track.path])
            #expect(replay.status != 0)
            #expect(replay.stderr.contains(track.path) && replay.stderr.contains("line"), "\(replay.stderr)")
            #expect(try daemon.ok("location").contains("fixed position 48.00000, 11.00000"), "the previous source stays")
            let missing = try daemon.cli(["location", "replay", "/nonexistent/walk.gpx"])
            #expect(missing.status != 0 && missing.stderr.contains("/nonexistent/walk.gpx"))

            let north = try daemon.cli(["location", "set", "91", "0"])
            #expect(north.status != 0 && north.stderr.contains("latitude 91.0 is outside"), "\(north.stderr)")

            // This test process is no app: the app methods refuse it.
            let client = try RawClient(path: daemon.socket)
            client.send(
                #"{"method":"io.offstage.Modes.StartUpdatingLocation","parameters":{"desiredAccuracy":0,"distanceFilter":0,"allowsBackground":true}}"#)
            let answer = try #require(client.receive())
            #expect(answer["error"] as? String == "io.offstage.Modes.NotAnApp")
            client.close()
        }
    }

    @Test("MODE-3: a real gpsd fed by gpsfake with walk.nmea is the source, and the tracker receives its fixes")
    func realGpsdAsTheSource() throws {
        if let why = GpsFake.unavailable { try Test.cancel(Comment(rawValue: why + "; skipped")) }
        try withDaemon { daemon in
            let gpsfake = try GpsFake(folder: daemon.root)
            defer { gpsfake.stop() }
            try Self.installTracker(daemon)
            let shown = try daemon.ok("location", "gpsd", "--port", String(gpsfake.port))
            #expect(shown.contains("gpsd") && shown.contains(":\(gpsfake.port)"), "\(shown)")
            try daemon.ok("open", Self.tracker)
            let fed = (try? daemon.waitUntil("the tracker gets fixes from gpsd", timeout: 60) {
                gpsfake.noteChildren()
                return Self.locationLines(daemon) >= 3 || !gpsfake.process.isRunning
            }) != nil
            guard fed, Self.locationLines(daemon) >= 3 else {
                try Test.cancel(Comment(rawValue: "gpsfake could not feed gpsd here (running: \(gpsfake.process.isRunning), "
                    + "output: \(daemon.output(Self.tracker).suffix(300)), gpsfake said: \(gpsfake.said)); skipped"))
            }
            // walk.nmea starts near 52.5163 N, 13.3777 E (Berlin): the tracker's locations are the log's.
            let location = try daemon.ok("--json", "location")
            let reply = try JSONDecoder().decode(ModesControlInterface.LocationReply.self, from: Data(location.utf8))
            #expect(reply.kind == "gpsd")
            let fix = try #require(reply.lastFix)
            #expect(abs(fix.latitude - 52.516) < 0.05 && abs(fix.longitude - 13.378) < 0.05, "\(fix)")
            #expect(daemon.output(Self.tracker).contains("location <+52.5"))
        }
    }
}
