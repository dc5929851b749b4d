import Foundation
import OffstageProtocol

/// Starts and stops the delivery of location events to the app, as `CLLocationManager` (SPEC MODE-3).
///
/// Standard updates (``startUpdatingLocation()``) deliver each new position at least ``distanceFilter`` metres from
/// the last one while the app runs; they stop while it is suspended. To keep receiving them in the background, declare
/// the `location` mode in `UIBackgroundModes` and set ``allowsBackgroundLocationUpdates``. The significant-change
/// service (``startMonitoringSignificantLocationChanges()``) needs no mode: a move of about 500 m wakes the app, or
/// launches it into the background with launch reason `location` — even after the user force-quit it. Such an app gets
/// its location through a manager it creates, with a delegate, in did-finish-launching, as on iOS.
///
/// Delegate methods are called on the main actor. The app's managers share one subscription with the daemon: the
/// settings of the latest ``startUpdatingLocation()`` apply, and updates stop when no manager wants them.
@MainActor
public final class LocationManager {
    /// Receives locations and errors. Held weakly, as on iOS.
    public weak var delegate: (any LocationManagerDelegate)?
    /// The accuracy wanted, in metres; a hint to the source (0, the default, is the best it has).
    public var desiredAccuracy: Double = 0
    /// A new location is delivered only once it lies at least this many metres from the last one delivered. 0, the
    /// default, delivers every location (`kCLDistanceFilterNone`).
    public var distanceFilter: Double = 0
    /// Whether standard updates keep the app running in the background. Needs the `location` background mode:
    /// without it ``startUpdatingLocation()`` reports a ``LocationError/Code/notPermitted`` error to the delegate
    /// (and the app's standard error) and delivers updates in the foreground only. Default false.
    public var allowsBackgroundLocationUpdates = false
    /// The most recent location this manager delivered, or nil before the first.
    public internal(set) var location: Location?

    /// Whether standard updates are on for this manager.
    public private(set) var isUpdatingLocation = false
    /// Whether this manager monitors significant changes.
    public private(set) var isMonitoringSignificantLocationChanges = false

    /// A manager with no updates on; it registers with the app's location dispatch.
    public init() {
        LocationDispatch.shared.register(self)
    }

    /// Starts (or changes) standard location updates with the current ``desiredAccuracy``, ``distanceFilter`` and
    /// ``allowsBackgroundLocationUpdates``.
    public func startUpdatingLocation() {
        isUpdatingLocation = true
        do throws(LocationError) {
            try LocationDispatch.shared.updatingChanged(by: self)
        } catch {
            fail(error, "startUpdatingLocation()")
            guard error.code == .notPermitted, allowsBackgroundLocationUpdates else {
                isUpdatingLocation = false
                return
            }
            // As audio without its mode: the app still gets updates while it is in front.
            do throws(LocationError) {
                try LocationDispatch.shared.updatingChanged(by: self, allowsBackground: false)
            } catch {
                isUpdatingLocation = false
            }
        }
    }

    /// Stops standard location updates for this manager.
    public func stopUpdatingLocation() {
        guard isUpdatingLocation else { return }
        isUpdatingLocation = false
        try? LocationDispatch.shared.updatingChanged(by: self)
    }

    /// Starts monitoring significant location changes (about 500 m). Monitoring outlives the process, a force-quit
    /// and a restart of the system, until ``stopMonitoringSignificantLocationChanges()``.
    public func startMonitoringSignificantLocationChanges() {
        isMonitoringSignificantLocationChanges = true
        do throws(LocationError) {
            try LocationDispatch.shared.monitoringChanged()
        } catch {
            isMonitoringSignificantLocationChanges = false
            fail(error, "startMonitoringSignificantLocationChanges()")
        }
    }

    /// Stops monitoring significant location changes for the app.
    public func stopMonitoringSignificantLocationChanges() {
        guard isMonitoringSignificantLocationChanges else { return }
        isMonitoringSignificantLocationChanges = false
        try? LocationDispatch.shared.monitoringChanged()
    }

    /// Whether this manager wants the locations the daemon sends.
    var isListening: Bool { isUpdatingLocation || isMonitoringSignificantLocationChanges }

    /// Hands the delegate new locations.
    func deliver(_ locations: [Location]) {
        guard let last = locations.last else { return }
        location = last
        delegate?.locationManager(self, didUpdateLocations: locations)
    }

    /// Tells the developer at once on standard error, and the delegate right after the call returns, as iOS reports
    /// errors asynchronously.
    func fail(_ error: LocationError, _ call: String) {
        reportToDeveloper("\(call) failed: \(error)")
        Task { @MainActor [weak self] in
            guard let self else { return }
            self.delegate?.locationManager(self, didFailWithError: error)
        }
    }
}
