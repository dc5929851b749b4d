/// An app's significant-change monitoring (SPEC MODE-3), kept in its durable state: it outlives the process, a
/// force-quit and a daemon restart, until the app stops it or is uninstalled.
///
/// Only the anchor is kept, and only its coordinate: that is all the rule needs, and it keeps the saved state small.
public struct SignificantChangeRegistration: Hashable, Sendable, Codable {
    /// Latitude of the position the app last heard of through this service, in degrees; nil before the first fix.
    public var anchorLatitude: Double?
    /// Longitude of that position, in degrees.
    public var anchorLongitude: Double?

    /// Monitoring with the anchor at `fix` (nil: the next fix sets it).
    public init(anchor fix: LocationFix? = nil) {
        anchorLatitude = fix?.latitude
        anchorLongitude = fix?.longitude
    }

    /// Metres from the anchor to `fix`; nil while there is no anchor.
    func distance(to fix: LocationFix) -> Double? {
        guard let anchorLatitude, let anchorLongitude else { return nil }
        return GeoDistance.metres(
            fromLatitude: anchorLatitude, longitude: anchorLongitude, toLatitude: fix.latitude, longitude: fix.longitude)
    }
}
