import Foundation
import OffstageCore
import OffstageProtocol

/// The device's time zone (SPEC NT-1): it follows the machine's — from the first start, when the machine's changes
/// while the daemon runs, and when it changed while the daemon was down — and the user may set it by hand
/// (`offstage device`), which holds until the machine's changes again.
extension DaemonEngine {
    /// Makes the device's time zone the machine's (`machine`) if the machine's is not the one last seen (or none was seen: the
    /// first start). Through the core, which moves the calendar triggers that follow the device's zone and tells the
    /// running apps. Without a change, and with `postEventIfSame` (the watcher saw the zone files change), the apps
    /// still hear of a time zone change, as before.
    func followMachineTimeZone(_ machine: String = MachineTimeZone().identifier, postEventIfSame: Bool) {
        eventLoop.preconditionInEventLoop()
        let lastSeen = try? store.meta(MachineTimeZone.metaKey)
        if lastSeen != machine {
            persist { try store.setMeta(MachineTimeZone.metaKey, machine) }
            if machine != core.device.settings.timeZone {
                var settings = core.device.settings
                settings.timeZone = machine
                apply(core.setDeviceSettings(settings, at: now))
                return
            }
        }
        if postEventIfSame { apply(core.systemEvent(.timeZoneChange, at: now).actions) }
    }

    /// The device's time zone set by the user: an IANA name, or `InvalidArgument` naming it and the fix.
    func validatedTimeZone(_ name: String) throws(VarlinkError) -> String {
        guard let zone = MachineTimeZone.validated(name), zone == name else {
            throw CoreError(
                .invalidArgument, "\(QuotedText.quote(name)) is not a time zone",
                fix: "use an IANA time zone name such as Europe/Berlin, America/New_York or UTC (see /usr/share/zoneinfo)"
            ).varlink(in: ControlInterface.name)
        }
        return zone
    }
}
