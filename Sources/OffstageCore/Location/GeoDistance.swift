import Foundation

/// Great-circle distances and bearings on a sphere of the Earth's mean radius.
///
/// Accuracy: the sphere differs from the WGS84 ellipsoid, so a distance is within 0.56 % of the true
/// (ellipsoidal, Vincenty/Karney) geodesic distance everywhere (the worst cases are short north–south hops near
/// the poles or the equator) and within 0.25 % between most city pairs (London–Paris −0.11 %). The haversine
/// form, unlike the spherical law of cosines, keeps its precision for points centimetres apart; only near
/// the antipode does it lose some (under a metre in 20 000 km). That is ample for the distance filter and significant-change (about 500 m, SPEC MODE-3),
/// where the receivers' own error is metres.
public enum GeoDistance {
    /// The mean Earth radius R₁ = (2a + b) / 3 of WGS84, in metres: the radius that minimises the sphere's
    /// distance error on average.
    public static let meanEarthRadius = 6_371_008.8

    /// Distance in metres between two points given in degrees (haversine).
    public static func metres(
        fromLatitude latitude1: Double, longitude longitude1: Double,
        toLatitude latitude2: Double, longitude longitude2: Double
    ) -> Double {
        let phi1 = radians(latitude1)
        let phi2 = radians(latitude2)
        let halfDeltaPhi = (phi2 - phi1) / 2
        let halfDeltaLambda = radians(longitude2 - longitude1) / 2
        let sinPhi = sin(halfDeltaPhi)
        let sinLambda = sin(halfDeltaLambda)
        let a = sinPhi * sinPhi + cos(phi1) * cos(phi2) * sinLambda * sinLambda
        // atan2 rather than asin(√a): rounding can push `a` a hair above 1 for antipodal points.
        let clamped = min(max(a, 0), 1)
        return 2 * meanEarthRadius * atan2(clamped.squareRoot(), (1 - clamped).squareRoot())
    }

    /// Distance in metres between two fixes' coordinates (altitude is ignored).
    public static func metres(from start: LocationFix, to end: LocationFix) -> Double {
        metres(fromLatitude: start.latitude, longitude: start.longitude, toLatitude: end.latitude, longitude: end.longitude)
    }

    /// Initial bearing in degrees clockwise from true north, 0 ..< 360, of the great circle from the first point
    /// to the second: the course of a receiver moving between two fixes. 0 for identical points.
    public static func initialBearing(
        fromLatitude latitude1: Double, longitude longitude1: Double,
        toLatitude latitude2: Double, longitude longitude2: Double
    ) -> Double {
        let phi1 = radians(latitude1)
        let phi2 = radians(latitude2)
        let deltaLambda = radians(longitude2 - longitude1)
        let y = sin(deltaLambda) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(deltaLambda)
        if x == 0 && y == 0 { return 0 }
        let degrees = atan2(y, x) * 180 / .pi
        let normalised = degrees < 0 ? degrees + 360 : degrees
        // -0.0000001 + 360 rounds to exactly 360, which is outside the documented range.
        return normalised >= 360 ? 0 : normalised
    }

    private static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
}
