import OffstageCore
import Testing

/// Great-circle distances for the distance filter and significant-change (SPEC MODE-3).
@Suite("Location: great-circle distance (MODE-3)")
struct LocationGeoDistanceTests {
    /// City pairs and their WGS84 ellipsoidal (Vincenty) distances in metres, computed independently of the code
    /// under test.
    static let cities: [(String, Double, Double, Double, Double, Double)] = [
        ("London–Paris", 51.5074, -0.1278, 48.8566, 2.3522, 343_923.1),
        ("New York–Los Angeles", 40.7128, -74.0060, 34.0522, -118.2437, 3_944_422.2),
        ("Sydney–Melbourne", -33.8688, 151.2093, -37.8136, 144.9631, 713_857.7),
        ("Tokyo–Osaka", 35.6762, 139.6503, 34.6937, 135.5023, 393_181.9),
        ("Berlin–Munich", 52.5200, 13.4050, 48.1351, 11.5820, 504_689.4),
        ("Quito–Singapore", -0.1807, -78.4678, 1.3521, 103.8198, 19_743_445.7),
        ("Helsinki–Tallinn", 60.1699, 24.9384, 59.4370, 24.7536, 82_307.8),
    ]

    @Test("Known city pairs are within 0.5 % of their ellipsoidal distance, both ways round")
    func cityPairs() {
        for (name, lat1, lon1, lat2, lon2, expected) in Self.cities {
            let there = GeoDistance.metres(fromLatitude: lat1, longitude: lon1, toLatitude: lat2, longitude: lon2)
            let back = GeoDistance.metres(fromLatitude: lat2, longitude: lon2, toLatitude: lat1, longitude: lon1)
            #expect(abs(there - expected) / expected < 0.005, "\(name): \(there) m against \(expected) m")
            #expect(abs(there - back) < 1e-6, "\(name) is not symmetric")
        }
    }

    @Test("Small steps keep their precision: 1 m and 1 cm along a meridian, 0 for the same point")
    func smallSteps() {
        let metre = 1 / (GeoDistance.meanEarthRadius * .pi / 180)
        #expect(abs(GeoDistance.metres(fromLatitude: 52, longitude: 13, toLatitude: 52 + metre, longitude: 13) - 1) < 1e-6)
        #expect(
            abs(GeoDistance.metres(fromLatitude: 52, longitude: 13, toLatitude: 52 + metre / 100, longitude: 13) - 0.01)
                < 1e-6)
        #expect(GeoDistance.metres(fromLatitude: 52, longitude: 13, toLatitude: 52, longitude: 13) == 0)
    }

    @Test("Antipodes are half the circumference, across the date line is short")
    func extremes() {
        let half = GeoDistance.metres(fromLatitude: 10, longitude: 20, toLatitude: -10, longitude: -160)
        // Haversine's one weak spot: at the antipode √(1 − a) loses digits, still well under a metre in 20 000 km.
        #expect(abs(half - .pi * GeoDistance.meanEarthRadius) < 1)
        // 0.2° of longitude on the equator, not 359.8°.
        let dateLine = GeoDistance.metres(fromLatitude: 0, longitude: 179.9, toLatitude: 0, longitude: -179.9)
        #expect(abs(dateLine - 0.2 * .pi / 180 * GeoDistance.meanEarthRadius) < 0.01)
    }

    @Test("A fix's distance to another equals the coordinate form; significant change is about 500 m")
    func fixDistance() {
        let start = LocationFix(latitude: 52.516275, longitude: 13.377704, horizontalAccuracy: 5, timestamp: .epoch)
        var moved = start
        moved.latitude += 500 / (GeoDistance.meanEarthRadius * .pi / 180)
        #expect(abs(start.distance(to: moved) - 500) < 1e-6)
        #expect(GeoDistance.metres(from: start, to: moved) == start.distance(to: moved))
    }

    @Test("The initial bearing is the compass direction of travel")
    func bearings() {
        #expect(abs(GeoDistance.initialBearing(fromLatitude: 0, longitude: 0, toLatitude: 1, longitude: 0)) < 1e-9)
        #expect(abs(GeoDistance.initialBearing(fromLatitude: 0, longitude: 0, toLatitude: 0, longitude: 1) - 90) < 1e-9)
        #expect(abs(GeoDistance.initialBearing(fromLatitude: 1, longitude: 0, toLatitude: 0, longitude: 0) - 180) < 1e-9)
        #expect(abs(GeoDistance.initialBearing(fromLatitude: 0, longitude: 1, toLatitude: 0, longitude: 0) - 270) < 1e-9)
        #expect(GeoDistance.initialBearing(fromLatitude: 5, longitude: 5, toLatitude: 5, longitude: 5) == 0)
    }
}
