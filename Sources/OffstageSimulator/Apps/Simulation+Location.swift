import OffstageCore

/// What a simulated app does with location, through the same core inputs the SDK's location manager uses, and the
/// location source feeding fixes (SPEC MODE-3).
extension Simulation {
    /// Carries out one of the app's location steps; a refusal is recorded in ``errors``.
    mutating func locationStep(_ step: AppBehavior.Step, pid: Int32, app id: AppID) {
        do throws(CoreError) {
            switch step {
            case .startUpdatingLocation(let request):
                perform(try core.startUpdatingLocation(id, pid: pid, request, at: now))
            case .stopUpdatingLocation:
                perform(try core.stopUpdatingLocation(id, pid: pid, at: now))
            case .startMonitoringSignificantChanges:
                perform(try core.startMonitoringSignificantLocationChanges(id, pid: pid, at: now))
            case .stopMonitoringSignificantChanges:
                perform(try core.stopMonitoringSignificantLocationChanges(id, pid: pid, at: now))
            default:
                break
            }
        } catch {
            errors.append(error)
        }
    }

    /// The app's code starts standard updates outside any callback (a button in the foreground).
    public mutating func startUpdatingLocation(_ id: AppID, _ request: LocationRequest) throws(CoreError) {
        perform(try core.startUpdatingLocation(id, pid: core.apps[id]?.process?.pid ?? -1, request, at: now))
    }

    /// The location source delivers a fix (timestamped now).
    public mutating func locationFix(latitude: Double, longitude: Double, accuracy: Double = 5) {
        let fix = LocationFix(latitude: latitude, longitude: longitude, horizontalAccuracy: accuracy, timestamp: now)
        perform(core.locationUpdated(fix, at: now))
    }

    /// The location source fails (gpsd went away).
    public mutating func locationSourceFailed(_ message: String) {
        perform(core.locationSourceFailed(message, at: now))
    }

    /// The machine restarts: every app process is gone, and a new core reads every app back from its durable state,
    /// and the transfers from their journal, as the daemon does from its store. The sockets the processes handed off went with them; the new shell watches
    /// nothing until the core asks it to watch every registered accessory again (SPEC MODE-4).
    public mutating func reboot() {
        var device = core.device
        device.foregroundApp = nil
        processes = [:]
        queue = EventQueue()
        // Transfers come back from their journal: running ones resume from their checkpoints (SPEC TR-6).
        readBackStore(device: device)
        perform(core.advance(to: now))
        perform(core.watchAccessories(at: now))
    }
}
