/// What a ``LocationManager`` tells the app, as `CLLocationManagerDelegate`. Called on the main actor; both methods
/// have empty default implementations.
@MainActor
public protocol LocationManagerDelegate: AnyObject {
    /// New locations, oldest first; the last is the most recent. While the app could not receive them (busy in
    /// another callback), newer locations replaced older ones, so there is usually one.
    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location])

    /// The manager could not give locations: the request was refused (``LocationError/Code/notPermitted``: for
    /// example `allowsBackgroundLocationUpdates` without the `location` background mode), or the source failed.
    func locationManager(_ manager: LocationManager, didFailWithError error: any Error)
}

extension LocationManagerDelegate {
    /// Does nothing.
    public func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {}
    /// Does nothing.
    public func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {}
}
