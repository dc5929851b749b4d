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

    /// A position the user fixes by hand (`offstage location set`, `io.offstage.ModesControl.SetLocation`), checked:
    /// latitude −90 … 90, longitude −180 … 180, an accuracy of 0 up to the Earth's circumference, all finite.
    /// - Throws: `InvalidArgument` naming the value and its range.
    public static func fixed(
        latitude: Double, longitude: Double, horizontalAccuracy: Double, at timestamp: Instant
    ) throws(CoreError) -> LocationFix {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw CoreError(
                .invalidArgument, "latitude \(latitude) is outside −90…90", fix: "give degrees north, −90 to 90 (south is negative)")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw CoreError(
                .invalidArgument, "longitude \(longitude) is outside −180…180", fix: "give degrees east, −180 to 180 (west is negative)")
        }
        do throws(NumberOutOfRange) {
            try CheckedNumber.finite(horizontalAccuracy, field: "accuracy", in: 0 ... earthCircumference, unit: "metres")
        } catch {
            throw CoreError(.invalidArgument, "an accuracy of \(error.value) m is not usable", fix: error.fix)
        }
        return LocationFix(latitude: latitude, longitude: longitude, horizontalAccuracy: horizontalAccuracy, timestamp: timestamp)
    }

    /// Great-circle distance in metres to `other` (see `GeoDistance`).
    public func distance(to other: LocationFix) -> Double {
        GeoDistance.metres(
            fromLatitude: latitude, longitude: longitude, toLatitude: other.latitude, longitude: other.longitude)
    }
}
