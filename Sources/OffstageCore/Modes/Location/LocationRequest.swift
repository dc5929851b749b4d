/// How an app asked for standard location updates (`CLLocationManager.startUpdatingLocation()`, SPEC MODE-3).
public struct LocationRequest: Hashable, Sendable, Codable {
    /// The accuracy the app wants, in metres; a hint to the source (as on iOS), not a filter: fixes are delivered
    /// whatever their accuracy, so an app sees what the receiver has.
    public var desiredAccuracy: Double
    /// The app hears of a new fix only once it lies at least this far, in metres, from the last fix it was given;
    /// 0 delivers every fix (`kCLDistanceFilterNone`).
    public var distanceFilter: Double
    /// `allowsBackgroundLocationUpdates`: the updates keep the app running in the background (needs the `location`
    /// mode, SPEC MODE-6).
    public var allowsBackground: Bool

    /// Creates a request.
    public init(desiredAccuracy: Double = 0, distanceFilter: Double = 0, allowsBackground: Bool = false) {
        self.desiredAccuracy = desiredAccuracy
        self.distanceFilter = distanceFilter
        self.allowsBackground = allowsBackground
    }
}
