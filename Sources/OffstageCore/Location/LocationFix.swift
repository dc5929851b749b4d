/// One position report, as every location source delivers it and as apps will receive it (SPEC MODE-3).
///
/// A plain value: the core never reads a clock, so `timestamp` is whatever instant the shell observed or the
/// receiver reported.
public struct LocationFix: Hashable, Sendable, Codable {
    /// Degrees north of the equator on WGS84, −90 … 90.
    public var latitude: Double
    /// Degrees east of Greenwich on WGS84, −180 … 180.
    public var longitude: Double
    /// Metres above mean sea level, when the source knows it (a 2D fix does not).
    ///
    /// Mean sea level rather than the ellipsoid because that is what GPX `ele`, NMEA GGA and gpsd's `altMSL`
    /// give, so switching sources does not make the altitude jump by the geoid separation (tens of metres).
    public var altitude: Double?
    /// Radius in metres of the circle the true position is likely (about 68 %) to lie in; never negative.
    public var horizontalAccuracy: Double
    /// Likely error of `altitude` in metres, when the source estimates it.
    public var verticalAccuracy: Double?
    /// Ground speed in metres per second, when known.
    public var speed: Double?
    /// Direction of travel in degrees clockwise from true north, 0 ..< 360, when known.
    public var course: Double?
    /// When the position was valid: the receiver's time, or the wall clock at delivery for a replayed track.
    public var timestamp: Instant

    /// Creates a fix; every value is taken as given (sources validate what they parse).
    public init(
        latitude: Double, longitude: Double, altitude: Double? = nil, horizontalAccuracy: Double,
        verticalAccuracy: Double? = nil, speed: Double? = nil, course: Double? = nil, timestamp: Instant
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
    }

    /// The Earth's equatorial circumference in metres: the largest distance or accuracy that means anything.
    public static let earthCircumference = 40_075_017.0

    /// Whether latitude and longitude are finite and inside their ranges: the one check every source applies
    /// before delivering, so an app never sees an impossible position.
    public var hasValidCoordinate: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }

    /// Great-circle distance in metres to `other` (see `GeoDistance`).
    public func distance(to other: LocationFix) -> Double {
        GeoDistance.metres(
            fromLatitude: latitude, longitude: longitude, toLatitude: other.latitude, longitude: other.longitude)
    }
}
