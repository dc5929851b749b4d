import Foundation
import OffstageCore
import Testing

@testable import OffstageDaemon

/// Reading recorded tracks, the replay source's input (SPEC MODE-3).
@Suite("Location: GPX and NMEA tracks (MODE-3)")
struct LocationTrackTests {
    @Test("The committed GPX track: 390 points a second apart, positions, altitudes and accuracies as written")
    func committedGPX() throws {
        let track = try LocationTrack.load(path: LocationFixtures.gpxPath)
        #expect(track.name == "walk.gpx")
        #expect(track.format == .gpx)
        #expect(track.points.count == 390)
        #expect(track.duration == 389)
        #expect(track.recordedStart == LocationFixtures.trackStart)
        #expect(track.points.enumerated().allSatisfy { $0.element.offset == Double($0.offset) })
        let first = try #require(track.points.first)
        #expect(first.latitude == 52.5162885 && first.longitude == 13.3777057)
        #expect(first.altitude == 33.7)
        // hdop 1.1 × the 5 m range error.
        #expect(abs((first.horizontalAccuracy ?? 0) - 5.5) < 1e-9)
        // GPX has no speed: it is derived from the steps, and a drive at 30 km/h stays near 8.3 m/s.
        let speeds = track.points.compactMap(\.speed)
        // Position noise of about a metre makes single steps jumpy; the average is the drive's.
        #expect(speeds.count == 390 && speeds.max()! < 20)
        #expect((6...9).contains(speeds.reduce(0, +) / Double(speeds.count)))
        // The loop is ~3 km and closes on itself.
        let length = zip(track.points, track.points.dropFirst()).reduce(0.0) { sum, pair in
            sum + GeoDistance.metres(
                fromLatitude: pair.0.latitude, longitude: pair.0.longitude, toLatitude: pair.1.latitude,
                longitude: pair.1.longitude)
        }
        #expect((2900...3400).contains(length), "\(length) m")
        let last = try #require(track.points.last)
        #expect(
            GeoDistance.metres(
                fromLatitude: first.latitude, longitude: first.longitude, toLatitude: last.latitude,
                longitude: last.longitude) < 10)
    }

    @Test("The committed NMEA log is the same track: RMC, GGA and GSA of each second make one point")
    func committedNMEAMatchesGPX() throws {
        let nmea = try LocationTrack.load(path: LocationFixtures.nmeaPath)
        let gpx = try LocationTrack.load(path: LocationFixtures.gpxPath)
        #expect(nmea.format == .nmea)
        #expect(nmea.points.count == gpx.points.count)
        #expect(nmea.recordedStart == LocationFixtures.trackStart)
        for (a, b) in zip(nmea.points, gpx.points) {
            #expect(a.offset == b.offset)
            // ddmm.mmmmm keeps 2 cm; GPX's 7 decimals keep 1 cm.
            #expect(
                GeoDistance.metres(fromLatitude: a.latitude, longitude: a.longitude, toLatitude: b.latitude, longitude: b.longitude)
                    < 0.05)
            #expect(a.altitude == b.altitude)
            #expect(a.horizontalAccuracy == b.horizontalAccuracy)
            #expect(a.verticalAccuracy == b.verticalAccuracy)
        }
        // RMC carries the recorded speed: knots back to metres per second.
        #expect(abs((nmea.points[100].speed ?? 0) - 8.3) < 0.01)
    }

    @Test("GPX 1.0 route points, fractional seconds and offsets, speed and course elements, namespace prefixes")
    func gpx10Variants() throws {
        let text = """
            <?xml version="1.0"?>
            <g:gpx version="1.0" xmlns:g="http://www.topografix.com/GPX/1/0">
              <g:wpt lat="1" lon="1"><g:name>a waypoint that is not the route</g:name></g:wpt>
              <g:rte>
                <g:rtept lat="48.8566" lon="2.3522"><g:time>2024-01-01T12:00:00.250+01:00</g:time><g:speed>2</g:speed></g:rtept>
                <g:rtept lat="48.8570" lon="2.3530"><g:time>2024-01-01T11:00:01.750Z</g:time><g:course>45</g:course></g:rtept>
              </g:rte>
            </g:gpx>
            """
        let track = try LocationTrack.parse(Data(text.utf8), file: "route.xml")
        #expect(track.points.map(\.offset) == [0, 1.5])
        #expect(track.points[0].speed == 2)
        #expect(track.points[1].course == 45)
        #expect(track.recordedStart == Instant(nanosecondsSinceEpoch: 1_704_106_800_250_000_000))
    }

    @Test("GPX points without times are spaced by the setting")
    func untimedSpacing() throws {
        var settings = LocationSourceSettings()
        settings.untimedPointSpacing = 2.5
        let text = #"<gpx><wpt lat="1" lon="2"/><wpt lat="1.001" lon="2"/><wpt lat="1.002" lon="2"/></gpx>"#
        let track = try LocationTrack.parse(Data(text.utf8), file: "places.txt", settings: settings)
        #expect(track.points.map(\.offset) == [0, 2.5, 5])
        #expect(track.recordedStart == nil)
    }

    @Test("GPX errors name the file, the line and the fix")
    func gpxErrors() throws {
        let outOfRange = LocationFixtures.expectError(
            .coordinateOutOfRange, in: "<gpx>\n<trk><trkseg>\n<trkpt lat=\"95\" lon=\"2\"/>\n</trkseg></trk></gpx>",
            file: "bad.gpx")
        #expect(outOfRange?.line == 3)
        #expect(outOfRange?.description.hasPrefix("bad.gpx line 3: latitude 95.0 is outside") == true)
        let backwards = LocationFixtures.expectError(
            .timeGoesBackwards,
            in: """
                <gpx><trk><trkseg>
                <trkpt lat="1" lon="2"><time>2024-01-01T00:00:10Z</time></trkpt>
                <trkpt lat="1" lon="2"><time>2024-01-01T00:00:05Z</time></trkpt>
                </trkseg></trk></gpx>
                """, file: "bad.gpx")
        #expect(backwards?.line == 3)
        #expect(LocationFixtures.expectError(.malformedTime, in: #"<gpx><wpt lat="1" lon="2"><time>yesterday</time></wpt></gpx>"#, file: "t.gpx")?.line == 1)
        #expect(LocationFixtures.expectError(.malformedCoordinate, in: #"<gpx><wpt lat="north" lon="2"/></gpx>"#, file: "c.gpx") != nil)
        #expect(LocationFixtures.expectError(.malformedCoordinate, in: #"<gpx><wpt lon="2"/></gpx>"#, file: "c.gpx") != nil)
        #expect(LocationFixtures.expectError(.mixedTimes, in: #"<gpx><wpt lat="1" lon="2"><time>2024-01-01T00:00:00Z</time></wpt><wpt lat="1" lon="2"/></gpx>"#, file: "m.gpx") != nil)
        #expect(LocationFixtures.expectError(.emptyTrack, in: "<gpx version=\"1.1\"><metadata/></gpx>", file: "e.gpx") != nil)
        #expect(LocationFixtures.expectError(.malformedGPX, in: "<kml><Placemark/></kml>", file: "k.kml")?.line == 1)
        let truncated = LocationFixtures.expectError(.malformedGPX, in: "<gpx>\n<trk>\n<trkpt lat=\"1\" lon=\"2\">", file: "cut.gpx")
        #expect(truncated?.line != nil)
    }

    @Test("NMEA: sentences of one second merge, RMC status V is skipped, GST gives the accuracy, GN and GL are read")
    func nmeaMerging() throws {
        let log = NMEALog([
            "GNGGA,120000.00,4807.03800,N,01131.00000,E,1,08,0.9,545.4,M,46.9,M,,",
            "GNGSA,A,3,04,05,,09,12,,,24,,,,,2.5,1.3,2.1",
            "GNGST,120000.00,2.0,1.5,1.0,30.0,3.0,4.0,6.0",
            "GNRMC,120000.00,A,4807.03800,N,01131.00000,E,10.0,84.4,230394,,,A",
            "GLGSV,1,1,01,65,10,100,30",
            "PGRME,15.0,M,45.0,M,25.0,M",
            "GPRMC,120001.00,V,4807.03900,N,01131.00100,E,,,230394,,,N",
            "GPGGA,120001.00,4807.03900,N,01131.00100,E,0,00,,,M,,M,,",
            "GPRMC,120002.50,A,4807.04000,S,01131.00000,W,0.0,,230394,,,A",
            "GPGSA,A,2,04,05,09,,,,,,,,,,3.0,2.0,2.2",
        ])
        let track = try LocationTrack.parse(log.data, file: "mixed.log")
        #expect(track.points.count == 2)
        let first = track.points[0]
        #expect(abs(first.latitude - (48 + 7.038 / 60)) < 1e-12 && abs(first.longitude - (11 + 31.0 / 60)) < 1e-12)
        #expect(first.altitude == 545.4)
        #expect(first.horizontalAccuracy == 5)  // √(3² + 4²) from GST, not the HDOP
        #expect(first.verticalAccuracy == 6)
        #expect(abs((first.speed ?? 0) - 10 * 1852 / 3600) < 1e-12)
        #expect(first.course == 84.4)
        let second = track.points[1]
        #expect(second.offset == 2.5)
        #expect(second.latitude < 0 && second.longitude < 0)
        // A 2D fix (GSA type 2) has no altitude; the HDOP gives the accuracy.
        #expect(second.altitude == nil && second.horizontalAccuracy == 10)
        #expect(track.recordedStart == Instant(nanosecondsSinceEpoch: 764_424_000 * 1_000_000_000))
    }

    @Test("NMEA without dates runs past midnight")
    func nmeaMidnight() throws {
        let log = NMEALog([
            "GPGGA,235959.00,4807.03800,N,01131.00000,E,1,08,0.9,545.4,M,46.9,M,,",
            "GPGGA,000001.00,4807.03800,N,01131.00000,E,1,08,0.9,545.4,M,46.9,M,,",
        ])
        #expect(try LocationTrack.parse(log.data, file: "night.nmea").points.map(\.offset) == [0, 2])
    }

    @Test("NMEA errors name the file, the line and the fix")
    func nmeaErrors() throws {
        var lines = NMEALog([
            "GPRMC,120000.00,A,4807.03800,N,01131.00000,E,10.0,84.4,230394,,,A",
            "GPRMC,120001.00,A,4807.03800,N,01131.00000,E,10.0,84.4,230394,,,A",
        ]).lines
        let right = lines[1].suffix(2)
        lines[1] = String(lines[1].dropLast(2)) + "00"
        let corrupt = LocationFixtures.expectError(.checksumMismatch, in: lines.joined(separator: "\n"))
        #expect(corrupt?.line == 2)
        #expect(
            corrupt?.description
                == "track.nmea line 2: checksum *00 does not match *\(right): the log is corrupt; re-record it or remove the line")

        let noChecksum = "$GPRMC,120000.00,A,4807.03800,N,01131.00000,E,10.0,84.4,230394,,,A"
        #expect(LocationFixtures.expectError(.checksumMismatch, in: noChecksum)?.line == 1)
        #expect(
            LocationFixtures.expectError(
                .coordinateOutOfRange, in: NMEALog(["GPGGA,120000.00,9107.03800,N,01131.00000,E,1,08,0.9,5.4,M,46.9,M,,"]).text)?
                .line == 1)
        #expect(
            LocationFixtures.expectError(
                .malformedCoordinate, in: NMEALog(["GPGGA,120000.00,48x7.038,N,01131.00000,E,1,08,0.9,5.4,M,46.9,M,,"]).text) != nil)
        #expect(
            LocationFixtures.expectError(
                .timeGoesBackwards,
                in: NMEALog([
                    "GPRMC,120005.00,A,4807.03800,N,01131.00000,E,0,0,230394,,,A",
                    "GPRMC,120001.00,A,4807.03800,N,01131.00000,E,0,0,230394,,,A",
                ]).text)?.line == 2)
        #expect(
            LocationFixtures.expectError(.noValidFix, in: NMEALog(["GPRMC,120000.00,V,,,,,,,230394,,,N", "GPRMC,,V,,,,,,,,,,N"]).text)
                != nil)
        #expect(LocationFixtures.expectError(.emptyTrack, in: NMEALog(["GPGSV,1,1,00"]).text) != nil)
        #expect(LocationFixtures.expectError(.malformedSentence, in: "# a comment\nhello")?.line == 2)
        #expect(LocationFixtures.expectError(.malformedSentence, in: NMEALog(["GPRMC,120000.00,A"]).text)?.line == 1)
        #expect(LocationFixtures.expectError(.unknownFormat, in: "lat,lon\n1,2\n", file: "points.csv")?.line == 1)
        #expect(LocationFixtures.expectError(.emptyTrack, in: " \n", file: "empty.gpx") != nil)
        #expect(throws: LocationTrackError.self) { try LocationTrack.load(path: "/nonexistent/track.gpx") }
    }

    @Test("Format comes from the content: an NMEA log named .gpx is read as NMEA")
    func formatByContent() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: LocationFixtures.nmeaPath))
        #expect(try LocationTrack.parse(data, file: "walk.gpx").format == .nmea)
        #expect(LocationTrack.detectFormat(Data("\u{FEFF}  <?xml version=\"1.0\"?><gpx/>".utf8)) == .gpx)
        #expect(LocationTrack.detectFormat(Data("# gpsfake log\n$GPGGA".utf8)) == .nmea)
    }

    @Test("The error codes are stable identifiers")
    func stableCodes() {
        #expect(LocationTrackError.Code.checksumMismatch.rawValue == "track.checksum-mismatch")
        #expect(Set(LocationTrackError.Code.allCases.map(\.rawValue)).count == LocationTrackError.Code.allCases.count)
    }
}

/// NMEA sentences written without their `$` and checksum, which this adds.
struct NMEALog {
    /// The finished lines.
    let lines: [String]

    init(_ bodies: [String]) {
        lines = bodies.map { body in
            let checksum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
            return "$\(body)*" + String(format: "%02X", Int(checksum))
        }
    }

    /// The lines joined with CRLF, as receivers write them.
    var text: String { lines.joined(separator: "\r\n") + "\r\n" }
    /// `text` as bytes.
    var data: Data { Data(text.utf8) }
}
