import Foundation
import OffstageProtocol

/// The app's side of location (SPEC MODE-3): its managers, the one subscription they share with the daemon, and the
/// delivery of `locations` callbacks to them.
@MainActor
final class LocationDispatch {
    static let shared = LocationDispatch()

    /// A manager, held weakly: a manager the app dropped stops receiving (and counting).
    private struct Entry {
        weak var manager: LocationManager?
    }

    private var entries: [Entry] = []
    /// What the daemon was last told: updating with these settings, or not (nil).
    private var subscribed: ModesInterface.StartUpdatingLocationParameters?
    private var monitoring = false
    /// Locations that came while no manager listened (a launch for a significant change before the app made its
    /// manager): given to the first manager that starts.
    private var undelivered: [Location] = []

    private var link: DaemonLink { DaemonLink.shared }

    /// Forgets managers and subscriptions: a new process of the app starts (the test kit).
    func forgetProcess() {
        entries = []
        subscribed = nil
        monitoring = false
        undelivered = []
    }

    func register(_ manager: LocationManager) {
        entries.removeAll { $0.manager == nil }
        entries.append(Entry(manager: manager))
    }

    private var managers: [LocationManager] { entries.compactMap(\.manager) }

    /// `manager` started or stopped updating: the daemon is told the latest settings, or to stop when no manager
    /// updates any more.
    func updatingChanged(by manager: LocationManager, allowsBackground: Bool? = nil) throws(LocationError) {
        let wanted: ModesInterface.StartUpdatingLocationParameters? =
            if manager.isUpdatingLocation {
                .init(
                    desiredAccuracy: manager.desiredAccuracy, distanceFilter: manager.distanceFilter,
                    allowsBackground: allowsBackground ?? manager.allowsBackgroundLocationUpdates)
            } else {
                managers.last { $0.isUpdatingLocation }.map {
                    .init(desiredAccuracy: $0.desiredAccuracy, distanceFilter: $0.distanceFilter,
                        allowsBackground: $0.allowsBackgroundLocationUpdates)
                }
            }
        guard wanted != subscribed else { return handUndelivered(to: manager) }
        do {
            if let wanted {
                _ = try link.request(ModesInterface.Method.startUpdatingLocation, wanted, as: EmptyReply.self)
            } else {
                _ = try link.request(ModesInterface.Method.stopUpdatingLocation, NoParameters(), as: EmptyReply.self)
            }
        } catch {
            throw LocationError(error)
        }
        subscribed = wanted
        handUndelivered(to: manager)
    }

    /// A manager started or stopped monitoring significant changes: the daemon monitors while any manager does.
    func monitoringChanged() throws(LocationError) {
        let wanted = managers.contains { $0.isMonitoringSignificantLocationChanges }
        if let manager = managers.first(where: \.isMonitoringSignificantLocationChanges) { handUndelivered(to: manager) }
        guard wanted != monitoring else { return }
        let method = wanted
            ? ModesInterface.Method.startMonitoringSignificantChanges : ModesInterface.Method.stopMonitoringSignificantChanges
        do {
            _ = try link.request(method, NoParameters(), as: EmptyReply.self)
        } catch {
            throw LocationError(error)
        }
        monitoring = wanted
    }

    /// A `locations` callback: every listening manager's delegate gets the locations.
    func deliver(_ messages: [AppInterface.LocationMessage]) {
        let locations = messages.map(Location.init)
        let listening = managers.filter(\.isListening)
        guard !listening.isEmpty else {
            undelivered = Array((undelivered + locations).suffix(Self.undeliveredLimit))
            return
        }
        for manager in listening { manager.deliver(locations) }
    }

    /// A `locationError` callback: every updating manager's delegate hears of it.
    func sourceFailed(_ message: String) {
        let error = LocationError(.sourceFailed, message, fix: "updates go on when the source recovers (see `offstage location`)")
        for manager in managers where manager.isUpdatingLocation {
            manager.delegate?.locationManager(manager, didFailWithError: error)
        }
    }

    /// The app attached to a restarted daemon, which forgot its standard updates (significant-change monitoring is
    /// kept in the daemon's store): they are asked for again.
    func reattached() {
        guard let subscribed else { return }
        do {
            _ = try link.request(ModesInterface.Method.startUpdatingLocation, subscribed, as: EmptyReply.self)
        } catch {
            reportToDeveloper("location updates could not be started again after the daemon restarted: \(LocationError(error))")
        }
    }

    /// How many locations wait for a manager at most: the latest are what matter.
    static let undeliveredLimit = 16

    private func handUndelivered(to manager: LocationManager) {
        guard manager.isListening, !undelivered.isEmpty else { return }
        let locations = undelivered
        undelivered = []
        // After the call that started the manager returns, as a delivery would come.
        Task { @MainActor in manager.deliver(locations) }
    }
}
