import Synchronization
import TestProcesses

@testable import OffstageDaemon

/// The events a desktop client delivered, in order, from the thread that reports them.
final class ReportedEvents<Event: Hashable & Sendable>: Sendable {
    private let events = Mutex<[Event]>([])

    /// The handler to give the client.
    var handler: @Sendable (Event) -> Void {
        { [self] event in events.withLock { $0.append(event) } }
    }

    var all: [Event] { events.withLock { $0 } }

    /// Waits up to `timeout` until `event` has come; whether it did.
    func waitFor(_ event: Event, timeout: Duration = .seconds(20)) -> Bool {
        PrivateSessionBus.waitFor(timeout: timeout) { all.contains(event) ? true : nil } ?? false
    }

    /// Waits up to `timeout` for the first event `match` accepts; returns it.
    func first<Value>(timeout: Duration = .seconds(20), _ match: (Event) -> Value?) -> Value? {
        PrivateSessionBus.waitFor(timeout: timeout) { all.lazy.compactMap(match).first }
    }
}

/// The events a `DesktopNotifications` delivered.
typealias DesktopEventLog = ReportedEvents<DesktopNotificationEvent>
