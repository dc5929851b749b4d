import Foundation
import OffstageCore

/// One point of a recorded track: where the receiver was, and when relative to the track's first point.
public struct TrackPoint: Hashable, Sendable {
    /// Seconds after the track's first point (0 for the first); never decreasing along a track.
    public var offset: Double
    /// Degrees north, WGS84.
    public var latitude: Double
    /// Degrees east, WGS84.
    public var longitude: Double
    /// Metres above mean sea level, when recorded.
    public var altitude: Double?
    /// Metres, when the file gives an estimate (GST, or a DOP times the range error).
    public var horizontalAccuracy: Double?
    /// Metres, when the file gives an estimate.
    public var verticalAccuracy: Double?
    /// Metres per second: recorded (NMEA RMC) or derived from the neighbouring points.
    public var speed: Double?
    /// Degrees clockwise from true north: recorded or derived from the neighbouring points.
    public var course: Double?

    /// Creates a point; `LocationTrack` validates it.
    public init(
        offset: Double, latitude: Double, longitude: Double, altitude: Double? = nil,
        horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil, speed: Double? = nil,
        course: Double? = nil
    ) {
        self.offset = offset
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
    }

    /// The fix this point stands for when delivered at `timestamp`; `defaultHorizontalAccuracy` fills a missing
    /// estimate (a fix always has one).
    public func fix(at timestamp: Instant, defaultHorizontalAccuracy: Double) -> LocationFix {
        LocationFix(
            latitude: latitude, longitude: longitude, altitude: altitude,
            horizontalAccuracy: horizontalAccuracy ?? defaultHorizontalAccuracy, verticalAccuracy: verticalAccuracy,
            speed: speed, course: course, timestamp: timestamp)
    }
}

/// A recorded track, read from a GPX or NMEA 0183 file, that `TrackReplay` plays back (SPEC MODE-3).
public struct LocationTrack: Hashable, Sendable {
    /// The file formats a track is read from; told apart by content, never by the file's extension.
    public enum Format: String, Hashable, Sendable {
        /// GPS Exchange Format 1.0 or 1.1 (XML).
        case gpx
        /// An NMEA 0183 sentence log.
        case nmea
    }

    /// The file's name (its last path component), used in descriptions and errors.
    public var name: String
    /// The format it was read from.
    public var format: Format
    /// The points in time order; never empty.
    public var points: [TrackPoint]
    /// When the first point was recorded, if the file says (GPX `<time>`, NMEA RMC date and time).
    public var recordedStart: Instant?

    /// Seconds from the first point to the last.
    public var duration: Double { points.last?.offset ?? 0 }

    /// A track of `points`; missing speeds and courses are derived from the neighbouring points.
    /// Throws `LocationTrackError` (`emptyTrack`, `timeGoesBackwards`) rather than hold an unplayable track.
    public init(name: String, format: Format, points: [TrackPoint], recordedStart: Instant? = nil) throws {
        guard let first = points.first else {
            throw LocationTrackError(
                .emptyTrack, file: name, problem: "the track has no points",
                fix: "record a track with at least one position, or choose another file")
        }
        for (index, pair) in zip(points, points.dropFirst()).enumerated() where pair.1.offset < pair.0.offset {
            throw LocationTrackError(
                .timeGoesBackwards, file: name,
                problem: "point \(index + 2) is \(pair.0.offset - pair.1.offset) s earlier than point \(index + 1)",
                fix: "sort the points by time or remove the out-of-order ones")
        }
        self.name = name
        self.format = format
        self.recordedStart = recordedStart
        // Offsets are relative to the first point whatever the caller passed.
        self.points = Self.derivingMotion(points.map { point in
            var point = point
            point.offset -= first.offset
            return point
        })
    }

    /// Reads the track at `path`, GPX or NMEA by its content: a regular file of at most
    /// `settings.maximumTrackBytes` (``TrackFile``). It may take as long as the file is large: call it off the event
    /// loop. Throws `LocationTrackError`.
    public static func load(path: String, settings: LocationSourceSettings = .init()) throws -> LocationTrack {
        let data = try TrackFile.read(path: path, limit: settings.maximumTrackBytes)
        return try parse(data, file: URL(fileURLWithPath: path).lastPathComponent, settings: settings)
    }

    /// Reads a track from a file's content; `file` names it in errors. Throws `LocationTrackError`.
    public static func parse(_ data: Data, file: String, settings: LocationSourceSettings = .init()) throws
        -> LocationTrack
    {
        switch detectFormat(data) {
        case .gpx: return try GPXReader(file: file, settings: settings).read(data)
        case .nmea: return try NMEAReader(file: file, settings: settings).read(data)
        case nil:
            if data.allSatisfy({ $0 == 0x20 || (0x09...0x0D).contains($0) }) {
                throw LocationTrackError(
                    .emptyTrack, file: file, problem: "the file is empty",
                    fix: "record a track (GPX or NMEA 0183) into it, or choose another file")
            }
            throw LocationTrackError(
                .unknownFormat, file: file, line: 1, problem: "the content is neither GPX (XML) nor NMEA 0183",
                fix: "give a GPX 1.0/1.1 file or an NMEA log whose lines start with $")
        }
    }

    /// The format of `data` by its first meaningful character: `<` is XML, `$` (a sentence), `!` (an
    /// encapsulated sentence) or `#` (a gpsfake comment) is NMEA. Extensions lie (`.log`, `.txt`, `.xml`).
    static func detectFormat(_ data: Data) -> Format? {
        var bytes = data[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        guard let first = bytes.first(where: { !($0 == 0x20 || (0x09...0x0D).contains($0)) }) else { return nil }
        switch first {
        case UInt8(ascii: "<"): return .gpx
        case UInt8(ascii: "$"), UInt8(ascii: "!"), UInt8(ascii: "#"): return .nmea
        default: return nil
        }
    }

    /// Fills each point's missing speed and course from the step to it from the point before (the first point
    /// from the step to the second): GPX has no speed, and an app asking for a course should get one.
    static func derivingMotion(_ points: [TrackPoint]) -> [TrackPoint] {
        guard points.count > 1 else { return points }
        var result = points
        for index in result.indices {
            let (from, to) = index == 0 ? (points[0], points[1]) : (points[index - 1], points[index])
            let distance = GeoDistance.metres(
                fromLatitude: from.latitude, longitude: from.longitude, toLatitude: to.latitude,
                longitude: to.longitude)
            let seconds = to.offset - from.offset
            if result[index].speed == nil, seconds > 0 { result[index].speed = distance / seconds }
            // Standing still has no direction: leave it unknown rather than report north.
            if result[index].course == nil, distance > 0 {
                result[index].course = GeoDistance.initialBearing(
                    fromLatitude: from.latitude, longitude: from.longitude, toLatitude: to.latitude,
                    longitude: to.longitude)
            }
        }
        return result
    }

    /// The check both readers apply to a parsed coordinate, as a `coordinateOutOfRange` error naming the line.
    static func checkRange(latitude: Double, longitude: Double, file: String, line: Int?) throws {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw LocationTrackError(
                .coordinateOutOfRange, file: file, line: line,
                problem: "latitude \(latitude) is outside −90 … 90",
                fix: "the point is corrupt or latitude and longitude are swapped; fix or remove it")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw LocationTrackError(
                .coordinateOutOfRange, file: file, line: line,
                problem: "longitude \(longitude) is outside −180 … 180",
                fix: "the point is corrupt; fix or remove it")
        }
    }
}
