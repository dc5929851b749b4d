import Foundation
import OffstageCore

/// One JSON report from gpsd, reduced to what a location source needs: the VERSION banner, TPV
/// (time-position-velocity) reports, and the class name of everything else (SKY, DEVICES, WATCH, …).
enum GpsdMessage: Hashable, Sendable {
    /// The banner gpsd sends on connection: `{"class":"VERSION","release":"3.22",…}`.
    case version(release: String)
    /// A time-position-velocity report.
    case tpv(GpsdTPV)
    /// Any other class, ignored.
    case other(className: String)

    /// Just the discriminator every gpsd report has.
    private struct Envelope: Decodable {
        let `class`: String
    }

    /// The VERSION fields we show.
    private struct Version: Decodable {
        let release: String?
    }

    /// The report in one line of gpsd output, or nil when the line is not a JSON object with a string
    /// `class` or a TPV/VERSION's fields have the wrong types (the caller counts it as malformed).
    static func decode(_ line: Data, using decoder: JSONDecoder) -> GpsdMessage? {
        guard let envelope = try? decoder.decode(Envelope.self, from: line) else { return nil }
        switch envelope.class {
        case "VERSION":
            guard let version = try? decoder.decode(Version.self, from: line) else { return nil }
            return .version(release: version.release ?? "unknown")
        case "TPV":
            guard let report = try? decoder.decode(GpsdTPV.self, from: line) else { return nil }
            return .tpv(report)
        default:
            return .other(className: envelope.class)
        }
    }
}

/// gpsd's TPV report, the fields of gpsd_json(5) that become a `LocationFix`; all optional as in gpsd.
struct GpsdTPV: Decodable, Hashable, Sendable {
    /// 0 unknown, 1 no fix, 2 2D, 3 3D.
    var mode: Int?
    /// ISO 8601 UTC time of the fix.
    var time: String?
    /// Degrees.
    var lat: Double?
    /// Degrees.
    var lon: Double?
    /// Metres above mean sea level (gpsd ≥ 3.20).
    var altMSL: Double?
    /// Metres above mean sea level (deprecated in 3.20 for `altMSL`, the only altitude before it).
    var alt: Double?
    /// Metres above the WGS84 ellipsoid.
    var altHAE: Double?
    /// Metres between the ellipsoid and mean sea level at the position.
    var geoidSep: Double?
    /// Metres per second over ground.
    var speed: Double?
    /// Degrees from true north.
    var track: Double?
    /// Estimated horizontal position error, metres (gpsd ≥ 3.20).
    var eph: Double?
    /// Longitude error estimate, metres (95 % confidence).
    var epx: Double?
    /// Latitude error estimate, metres (95 % confidence).
    var epy: Double?
    /// Vertical error estimate, metres.
    var epv: Double?

    /// The fix this report stands for, or nil when gpsd has none (mode below 2) or the coordinate is missing or
    /// impossible. Stamped with the report's `time`, else `now` (gpsd leaves it out until the receiver has
    /// given one). The altitude is only taken from a 3D fix and is above mean sea level, like GPX and NMEA's
    /// (`altHAE` minus `geoidSep` when gpsd gives only that).
    func fix(now: Instant, defaultHorizontalAccuracy: Double) -> LocationFix? {
        guard let mode, mode >= 2, let lat, let lon else { return nil }
        let accuracy = eph ?? [epx, epy].compactMap { $0 }.max() ?? defaultHorizontalAccuracy
        let seaLevel = altMSL ?? alt ?? altHAE.map { $0 - (geoidSep ?? 0) }
        let fix = LocationFix(
            latitude: lat, longitude: lon, altitude: mode >= 3 ? seaLevel : nil,
            horizontalAccuracy: accuracy, verticalAccuracy: mode >= 3 ? epv : nil, speed: speed, course: track,
            timestamp: time.flatMap { ISO8601Time.instant($0) } ?? now)
        return fix.hasValidCoordinate ? fix : nil
    }
}
