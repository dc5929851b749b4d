import COffstageSystem
import Glibc
import OffstageCore

/// Watches for the system events the machine itself causes (SPEC LC-4): the clock being set (a timerfd with
/// cancel-on-set: the kernel tells, nothing polls) and the time zone changing (inotify on the folder of
/// `/etc/localtime` and `/etc/timezone`). Battery, network and settings changes reach the core by other paths.
final class SystemClockWatcher: Sendable {
    private let clock: Int32
    private let zone: Int32
    private let wake: Int32
    private let thread: WatcherThread

    /// Starts watching; `onEvent` is called on the watcher's thread.
    init(zoneDirectory: String = "/etc", onEvent: @escaping @Sendable (SystemEvent) -> Void) throws {
        let clock = offstage_clock_change_fd()
        guard clock >= 0 else { throw ProcessControlError.systemCallFailed(call: "timerfd_create", target: "clock", errno: errno) }
        let zone = offstage_inotify_directory(zoneDirectory)
        let wake = offstage_eventfd()
        guard wake >= 0 else {
            close(clock)
            if zone >= 0 { close(zone) }
            throw ProcessControlError.systemCallFailed(call: "eventfd", target: "clock watcher", errno: errno)
        }
        (self.clock, self.zone, self.wake) = (clock, zone, wake)
        thread = try WatcherThread(name: "offstage-clock") {
            var fds = [
                pollfd(fd: clock, events: Int16(POLLIN), revents: 0), pollfd(fd: zone, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            while true {
                guard poll(&fds, nfds_t(fds.count), -1) >= 0 || errno == EINTR else { return }
                if fds[2].revents != 0 { return }
                if fds[0].revents != 0, offstage_clock_change_read(clock) == 1 {
                    _ = offstage_clock_change_rearm(clock)
                    onEvent(.significantTimeChange)
                }
                if fds[1].revents != 0, offstage_inotify_touched(zone, "localtime", "timezone") == 1 {
                    onEvent(.timeZoneChange)
                    onEvent(.significantTimeChange)
                }
            }
        }
    }

    /// Stops the thread and closes the descriptors.
    func stop() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
        thread.join()
        for fd in [clock, zone, wake] where fd >= 0 { close(fd) }
    }
}
