import Foundation
import OffstageCore
import Synchronization
import Testing

@testable import OffstageDaemon

/// The gpsd source (SPEC MODE-3) against a fake gpsd on loopback that speaks gpsd's real JSON lines.
@Suite("Location: gpsd client against a fake gpsd (MODE-3)")
struct LocationGpsdClientTests {
    static func settings(port: Int) -> LocationSourceSettings {
        var settings = LocationSourceSettings()
        settings.gpsdPort = port
        settings.gpsdReconnectInitialDelay = 0.02
        settings.gpsdReconnectMaximumDelay = 0.08
        settings.gpsdMaximumLineLength = 1024
        return settings
    }

    static let noon = Instant(secondsSinceEpoch: 1_800_000_000)

    @Test("Banner, WATCH, then each TPV with a fix becomes a fix; SKY, DEVICES and no-fix reports deliver none")
    func fixesFromTPV() async throws {
        let gpsd = try FakeGpsd(scripts: [[
            .send([GpsdLines.version]), .expectWatch,
            .send([GpsdLines.devices, GpsdLines.watch, GpsdLines.device, GpsdLines.tpvNoFix, GpsdLines.sky]),
            .send([GpsdLines.tpvNoTime, GpsdLines.tpv1, GpsdLines.sky, GpsdLines.tpv2D]), .hold,
        ]])
        defer { gpsd.shutDown() }
        let client = GpsdClient(settings: Self.settings(port: gpsd.port), clock: { Self.noon })
        #expect(client.description == "gpsd at 127.0.0.1:\(gpsd.port), not started")
        let recorder = SourceRecorder()
        try client.start(onFix: recorder.onFix(), onStatus: recorder.onStatus)
        #expect(await recorder.wait { fixes, _ in fixes.count >= 3 })
        client.stop()
        #expect(gpsd.commands == [#"?WATCH={"enable":true,"json":true};"#])
        let fixes = recorder.fixes
        #expect(fixes.count == 3)
        // Before the receiver gives a time, the fix is stamped with the clock.
        #expect(fixes[0].timestamp == Self.noon)
        #expect(fixes[0].latitude == 52.517274167 && fixes[0].longitude == 13.385063833)
        let timed = fixes[1]
        #expect(timed.timestamp == Instant(nanosecondsSinceEpoch: 1_716_024_680 * 1_000_000_000))
        #expect(timed.altitude == 36.6)  // altMSL, not altHAE
        #expect(timed.horizontalAccuracy == 17.1 && timed.verticalAccuracy == 29.9)
        #expect(timed.speed == 8.298 && timed.course == 0)
        // A 2D fix: no altitude; max(epx, epy) when there is no eph; fractional seconds kept.
        let flat = fixes[2]
        #expect(flat.altitude == nil && flat.verticalAccuracy == nil && flat.horizontalAccuracy == 20.25)
        #expect(flat.timestamp == Instant(nanosecondsSinceEpoch: 1_118_226_888_283_000_000))
        #expect(recorder.statuses == [.noFix(detail: "gpsd reports mode 1"), .delivering])
        #expect(client.malformedLineCount == 0)
        #expect(client.fixCount == 3)
        #expect(client.description == "gpsd 3.22 at 127.0.0.1:\(gpsd.port), stopped")
    }

    @Test("Malformed lines are counted and skipped; lines split across reads are joined")
    func malformedLines() async throws {
        let half = GpsdLines.tpv2.count / 2
        let gpsd = try FakeGpsd(scripts: [[
            .send([GpsdLines.version]), .expectWatch,
            .send([
                "this is not JSON", #"{"no_class":true}"#, #"{"class":"TPV","mode":3,"lat":"north","lon":7}"#,
                #"{"class":"TPV","device":"/dev/pts/1","mode":3,"lat":52.5"#, "[1,2,3]", String(repeating: "x", count: 5000),
                GpsdLines.tpv1, #"{"class":"TPV","mode":3,"lat":95.0,"lon":7.0}"#,
            ]),
            .sendRaw(String(GpsdLines.tpv2.prefix(half))), .sendRaw(String(GpsdLines.tpv2.dropFirst(half)) + "\n"),
            .send([GpsdLines.tpv3]), .hold,
        ]])
        defer { gpsd.shutDown() }
        let client = GpsdClient(settings: Self.settings(port: gpsd.port))
        let recorder = SourceRecorder()
        try client.start(onFix: recorder.onFix(), onStatus: recorder.onStatus)
        #expect(await recorder.wait { fixes, _ in fixes.count >= 3 })
        #expect(client.description == "gpsd 3.22 at 127.0.0.1:\(gpsd.port), 3D fix")
        client.stop()
        #expect(recorder.fixes.map(\.latitude) == [52.517274167, 52.517347667, 52.517421667])
        // Five lines that are not gpsd reports and one of 5000 bytes over the 1024-byte limit; the impossible
        // latitude is a report without a usable fix, not a malformed line.
        #expect(client.malformedLineCount == 6)
    }

    @Test("A dropped connection reports disconnected, reconnects after the back-off and fixes resume")
    func reconnects() async throws {
        let gpsd = try FakeGpsd(scripts: [
            [.send([GpsdLines.version]), .expectWatch, .send([GpsdLines.tpv1]), .close],
            [.send([GpsdLines.version]), .expectWatch, .send([GpsdLines.tpv2, GpsdLines.tpv3]), .hold],
        ])
        defer { gpsd.shutDown() }
        let client = GpsdClient(settings: Self.settings(port: gpsd.port))
        let recorder = SourceRecorder()
        try client.start(onFix: recorder.onFix(), onStatus: recorder.onStatus)
        #expect(await recorder.wait { fixes, _ in fixes.count >= 3 })
        client.stop()
        #expect(gpsd.accepted == 2)
        #expect(gpsd.commands.count == 2)
        #expect(recorder.fixes.count == 3)
        #expect(
            recorder.statuses == [
                .delivering, .disconnected(reason: "gpsd closed the connection", retryingIn: .milliseconds(20)), .delivering,
            ])
    }

    @Test("No gpsd: disconnected with the reason, retries doubling up to the cap, and stop() ends the wait")
    func noGpsdBacksOff() async throws {
        // A port that was free a moment ago: nothing listens there.
        let closed = try FakeGpsd(scripts: [[.close]])
        let port = closed.port
        closed.shutDown()
        let client = GpsdClient(settings: Self.settings(port: port))
        let recorder = SourceRecorder()
        try client.start(onFix: recorder.onFix(), onStatus: recorder.onStatus)
        #expect(await recorder.wait { _, statuses in statuses.count >= 5 })
        #expect(client.description == "gpsd at 127.0.0.1:\(port), disconnected (connection refused)")
        let before = ContinuousClock.now
        client.stop()
        #expect(ContinuousClock.now - before < .seconds(2))
        let delays = recorder.statuses.prefix(5).map { status -> Duration? in
            guard case .disconnected(let reason, let delay) = status, reason == "connection refused" else { return nil }
            return delay
        }
        #expect(delays == [.milliseconds(20), .milliseconds(40), .milliseconds(80), .milliseconds(80), .milliseconds(80)])
        let count = recorder.statuses.count
        try await Task.sleep(for: .milliseconds(200))
        #expect(recorder.statuses.count == count)
        #expect(recorder.fixes.isEmpty)
    }

    @Test("A peer that is not gpsd (no VERSION banner) is a failed connection, not a crash")
    func notGpsd() async throws {
        var settings = Self.settings(port: 0)
        let fake = try FakeGpsd(scripts: [[.send(["SSH-2.0-OpenSSH_9.2"]), .hold]])
        defer { fake.shutDown() }
        settings.gpsdPort = fake.port
        let client = GpsdClient(settings: settings)
        let recorder = SourceRecorder()
        try client.start(onFix: recorder.onFix(), onStatus: recorder.onStatus)
        #expect(await recorder.wait { _, statuses in !statuses.isEmpty })
        client.stop()
        guard case .disconnected(let reason, _) = recorder.statuses.first else {
            Issue.record("expected disconnected, got \(recorder.statuses)")
            return
        }
        #expect(reason == "the first line is not gpsd's VERSION banner: is this gpsd?")
    }

    @Test("stop() from inside the fix callback ends the client without deadlock; nothing arrives afterwards")
    func stopFromCallback() async throws {
        let gpsd = try FakeGpsd(scripts: [[
            .send([GpsdLines.version]), .expectWatch, .send([GpsdLines.tpv1, GpsdLines.tpv2, GpsdLines.tpv3]), .hold,
        ]])
        defer { gpsd.shutDown() }
        let client = GpsdClient(settings: Self.settings(port: gpsd.port))
        let recorder = SourceRecorder()
        try client.start(onFix: recorder.onFix { _ in client.stop() }, onStatus: recorder.onStatus)
        #expect(await recorder.wait { fixes, _ in fixes.count >= 1 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(recorder.fixes.count == 1)
        client.stop()
    }
}
