import Foundation
import OffstageCore
import OffstageProtocol

/// A latitude and longitude in degrees on WGS84, as `CLLocationCoordinate2D`.
public struct LocationCoordinate2D: Hashable, Sendable {
    /// Degrees north of the equator, −90 … 90.
    public var latitude: Double
    /// Degrees east of Greenwich, −180 … 180.
    public var longitude: Double

    /// Creates a coordinate.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// One position report, as `CLLocation`: where, how sure, how fast, which way and when (SPEC MODE-3).
///
/// As on iOS, a value the source does not know is negative: `verticalAccuracy`, `speed`, `course` (and their
/// accuracies) are −1 when unknown, and `altitude` is then 0 with a negative `verticalAccuracy`.
public struct Location: Hashable, Sendable, CustomStringConvertible {
    /// Where.
    public var coordinate: LocationCoordinate2D
    /// Metres above mean sea level; meaningful only when ``verticalAccuracy`` is not negative.
    public var altitude: Double
    /// Radius in metres of the circle the true position likely (about 68 %) lies in.
    public var horizontalAccuracy: Double
    /// Likely error of ``altitude`` in metres; −1 when the altitude is unknown.
    public var verticalAccuracy: Double
    /// Ground speed in metres per second; −1 when unknown.
    public var speed: Double
    /// Direction of travel in degrees clockwise from true north, 0 ..< 360; −1 when unknown.
    public var course: Double
    /// When the position was valid.
    public var timestamp: Date

    /// Creates a location; unknown values are −1 as on iOS.
    public init(
        coordinate: LocationCoordinate2D, altitude: Double = 0, horizontalAccuracy: Double, verticalAccuracy: Double = -1,
        speed: Double = -1, course: Double = -1, timestamp: Date = Date()
    ) {
        self.coordinate = coordinate
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
    }

    /// Creates a location at `latitude`, `longitude` with `horizontalAccuracy` metres of error, now.
    public init(latitude: Double, longitude: Double, horizontalAccuracy: Double = 0) {
        self.init(coordinate: LocationCoordinate2D(latitude: latitude, longitude: longitude), horizontalAccuracy: horizontalAccuracy)
    }

    /// The location a daemon's message carries.
    init(_ message: AppInterface.LocationMessage) {
        self.init(
            coordinate: LocationCoordinate2D(latitude: message.latitude, longitude: message.longitude),
            altitude: message.altitude ?? 0, horizontalAccuracy: message.horizontalAccuracy,
            verticalAccuracy: message.altitude == nil ? -1 : message.verticalAccuracy ?? -1,
            speed: message.speed ?? -1, course: message.course ?? -1,
            timestamp: WireTime.date(message.timestamp))
    }

    /// Great-circle distance in metres to `location`, ignoring altitude, as `CLLocation.distance(from:)`.
    public func distance(from location: Location) -> Double {
        GeoDistance.metres(
            fromLatitude: coordinate.latitude, longitude: coordinate.longitude,
            toLatitude: location.coordinate.latitude, longitude: location.coordinate.longitude)
    }

    /// `<+52.51629,+13.37771> ±5 m, 1.4 m/s, course 87°`.
    public var description: String {
        var text = String(format: "<%+.5f,%+.5f> ±%.0f m", coordinate.latitude, coordinate.longitude, horizontalAccuracy)
        if speed >= 0 { text += String(format: ", %.1f m/s", speed) }
        if course >= 0 { text += String(format: ", course %.0f°", course) }
        return text
    }
}
