import Foundation
import OffstageCore
import Synchronization

/// The store's notifications being read back and made into a schedule on a thread of their own, started as soon as
/// the store is open, while the rest of the daemon starts (SPEC §11: restart recovery ≤ 500 ms with 64,000 pending).
/// The engine takes the result when it restores them, waiting for what is left.
final class NotificationsReading: Sendable {
    /// What was read.
    struct Read: Sendable {
        /// Every stored notification, as the core's schedule (apps no longer installed not yet left out).
        var schedule: NotificationSchedule
        /// The delivery rows, with what the desktop was shown.
        var deliveries: [OffstageStore.StoredDelivery]
        var pendingCount: Int
        /// Milliseconds spent reading the rows, and making the schedule of them.
        var readMilliseconds: Int64
        var scheduleMilliseconds: Int64
    }

    private let outcome = Mutex<Result<Read, any Error>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts reading `store`'s notifications.
    init(_ store: OffstageStore) {
        let thread = Thread { [self] in
            let result = Result { () throws -> Read in
                let start = DaemonMetrics.monotonicNanoseconds()
                let stored = try store.loadNotifications()
                let read = DaemonMetrics.monotonicNanoseconds()
                let schedule = NotificationSchedule(
                    restoring: stored.pending, delivered: stored.deliveries.map(\.record), badges: stored.badges,
                    categories: stored.categories)
                return Read(
                    schedule: schedule, deliveries: stored.deliveries, pendingCount: stored.pending.count,
                    readMilliseconds: (read - start) / 1_000_000,
                    scheduleMilliseconds: (DaemonMetrics.monotonicNanoseconds() - read) / 1_000_000)
            }
            outcome.withLock { $0 = result }
            finished.signal()
        }
        thread.name = "offstage-notifications"
        thread.start()
    }

    /// What was read, once it has been, or the error that stopped it.
    func wait() throws -> Read {
        finished.wait()
        finished.signal()
        return try outcome.withLock { $0! }.get()
    }
}
