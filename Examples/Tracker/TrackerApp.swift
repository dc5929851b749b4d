import Foundation
import Offstage

/// The background-modes tutorial's run tracker: records the distance travelled. It starts location updates that go
/// on in the background (`allowsBackgroundLocationUpdates`, which needs the `location` mode in its Info.plist) as it
/// launches, prints each location and the running distance, and also monitors significant changes, so a move of
/// about 500 m launches it again after it was terminated or force-quit (SPEC MODE-3).
///
/// Options (in the manifest's `OffstageLinux.Arguments`):
/// - `--distance-filter METRES`: hear of a new location only once it is that far from the last (default: every one).
/// - `--foreground-only`: leave `allowsBackgroundLocationUpdates` off, so updates stop when the app is suspended.
@MainActor
final class TrackerDelegate: ApplicationDelegate, LocationManagerDelegate {
    let manager = LocationManager()
    let distanceFilter: Double
    let foregroundOnly: Bool
    var previous: Location?
    var travelled = 0.0

    init(arguments: [String]) {
        func value(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        distanceFilter = value("--distance-filter").flatMap(Double.init) ?? 0
        foregroundOnly = arguments.contains("--foreground-only")
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("did-finish-launching (\(options.reason.rawValue))")
        // As on iOS, an app launched for a significant change gets the location through the manager it makes here.
        manager.delegate = self
        manager.desiredAccuracy = 10
        manager.distanceFilter = distanceFilter
        manager.allowsBackgroundLocationUpdates = !foregroundOnly
        manager.startUpdatingLocation()
        manager.startMonitoringSignificantLocationChanges()
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { say("did-become-active") }
    func applicationWillResignActive(_ application: Application) { say("will-resign-active") }
    func applicationDidEnterBackground(_ application: Application) {
        say(foregroundOnly ? "did-enter-background; updates stop while suspended" : "did-enter-background; still tracking")
    }
    func applicationWillEnterForeground(_ application: Application) { say("will-enter-foreground") }
    func applicationWillTerminate(_ application: Application) { say("will-terminate after \(metres(travelled))") }

    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
        for location in locations {
            if let previous { travelled += location.distance(from: previous) }
            previous = location
            say("location \(location); travelled \(metres(travelled))")
        }
    }

    func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
        say("location error: \(error)")
    }

    func metres(_ value: Double) -> String { String(format: "%.0f m", value) }
    func say(_ line: String) { print(timestamp() + " " + line) }
}

func timestamp() -> String {
    let formatter = DateFormatter()
    formatter.dateFormat = "HH:mm:ss.SSS"
    return formatter.string(from: Date())
}

@main
struct TrackerApp {
    @MainActor static func main() {
        Application.main(delegate: TrackerDelegate(arguments: Array(CommandLine.arguments.dropFirst())))
    }
}
