import Foundation
import Glibc
import OffstageCore
import TestProcesses
import Testing

@testable import OffstageDaemon

/// The gpsd client against the real gpsd (SPEC MODE-3), fed the committed NMEA log by gpsfake, which starts a
/// gpsd of its own on a free port. Cancelled (skipped) with the reason when gpsd or gpsfake cannot run here.
@Suite("Location: gpsd client against the real gpsd fed by gpsfake (MODE-3)", .serialized)
struct LocationGpsdIntegrationTests {
    static let gpsfake = "/usr/bin/gpsfake"
    static let gpsd = "/usr/sbin/gpsd"

    @Test("Fixes from the real gpsd are the positions and times of walk.nmea")
    func realGpsd() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.gpsfake), FileManager.default.isExecutableFile(atPath: Self.gpsd)
        else {
            try Test.cancel("gpsd or gpsfake is not installed (Debian packages gpsd and gpsd-clients); skipped")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-gpsfake-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A port that was free a moment ago.
        let probe = try FakeGpsd(scripts: [[.close]])
        let port = probe.port
        probe.shutDown()

        let log = folder.appendingPathComponent("gpsfake.log")
        let gpsfake = try SpawnedProcess(
            Self.gpsfake, ["-P", String(port), "-1", "-c", "0.1", "-q", LocationFixtures.nmeaPath], output: log.path)
        var children: Set<Int32> = []
        defer { Self.stop(gpsfake, children: children) }

        var settings = LocationSourceSettings()
        settings.gpsdPort = port
        settings.gpsdReconnectInitialDelay = 0.1
        settings.gpsdReconnectMaximumDelay = 0.5
        let client = GpsdClient(settings: settings)
        let recorder = SourceRecorder()
        try client.start(onFix: recorder.onFix(), onStatus: recorder.onStatus)
        defer { client.stop() }
        let enough = await recorder.wait(timeout: .seconds(60)) { fixes, _ in
            fixes.count >= 5 || !gpsfake.isRunning
        }
        children = Self.children(of: gpsfake.pid)
        client.stop()
        let fixes = recorder.fixes
        guard fixes.count >= 5 else {
            let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            let reason =
                "gpsfake could not feed gpsd here (running: \(gpsfake.isRunning), waited: \(enough), fixes: \(fixes.count), "
                + "statuses: \(recorder.statuses.map(\.description)), gpsfake said: \(said.suffix(500))); skipped"
            try Test.cancel(Comment(rawValue: reason))
        }
        // Every fix is one of the log's points, at the log's time.
        let track = try LocationTrack.load(path: LocationFixtures.nmeaPath)
        let start = try #require(track.recordedStart)
        for fix in fixes {
            let nearest = track.points.min { a, b in
                GeoDistance.metres(fromLatitude: a.latitude, longitude: a.longitude, toLatitude: fix.latitude, longitude: fix.longitude)
                    < GeoDistance.metres(fromLatitude: b.latitude, longitude: b.longitude, toLatitude: fix.latitude, longitude: fix.longitude)
            }!
            let distance = GeoDistance.metres(
                fromLatitude: nearest.latitude, longitude: nearest.longitude, toLatitude: fix.latitude, longitude: fix.longitude)
            #expect(distance < 0.05, "fix \(fix) is \(distance) m from the log")
            // gpsd stamps a fix with the log's time once the receiver (the log) has given one.
            if fix.timestamp < start + .seconds(3600) {
                #expect(abs((fix.timestamp - start).inSeconds - nearest.offset) < 1.01)
            }
            #expect(fix.altitude.map { abs($0 - (nearest.altitude ?? 0)) < 0.05 } ?? true)
        }
        #expect(client.description.hasPrefix("gpsd 3.") && client.description.hasSuffix("stopped"))
        // Recorded so a test log shows how far the real run got.
        print("LocationGpsdIntegrationTests: \(fixes.count) fixes from the real gpsd via gpsfake on port \(port)")
    }

    /// The pids whose parent is `parent` (the gpsd gpsfake started), read from /proc: never looked up by name.
    static func children(of parent: Int32) -> Set<Int32> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var found: Set<Int32> = []
        for entry in entries {
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After "pid (comm) " come the state and the parent pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == parent { found.insert(pid) }
        }
        return found
    }

    /// Ends exactly what this test started: gpsfake (which stops its gpsd) and, if one outlives it, that gpsd.
    static func stop(_ gpsfake: SpawnedProcess, children: Set<Int32>) {
        let all = children.union(gpsfake.isRunning ? Self.children(of: gpsfake.pid) : [])
        gpsfake.terminate()
        // gpsfake leaves its control socket behind when terminated.
        try? FileManager.default.removeItem(atPath: "/tmp/gpsfake-\(gpsfake.pid).sock")
        for pid in all {
            for signal in [SIGTERM, SIGKILL] {
                guard FileManager.default.fileExists(atPath: "/proc/\(pid)") else { break }
                kill(pid, signal)
                // Up to 5 s for it to go before the next signal.
                for _ in 0..<50 where FileManager.default.fileExists(atPath: "/proc/\(pid)") { usleep(100_000) }
            }
        }
    }
}
