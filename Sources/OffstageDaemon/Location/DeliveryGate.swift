import Foundation

/// Makes "nothing is delivered after `stop()` returns" true for a source whose deliveries run elsewhere.
///
/// Each delivery runs with the gate's lock held and only while the gate is open; `close()` takes the same
/// lock, so it waits for a delivery in progress and every later one sees the gate shut. The lock is recursive
/// so a callback may stop its own source (close from inside a delivery) without deadlocking.
final class DeliveryGate: @unchecked Sendable {
    // `isOpen` is only touched with `lock` held: that is what makes the class Sendable.
    private let lock = NSRecursiveLock()
    private var isOpen = true

    /// A gate that is open until `close()`.
    init() {}

    /// Runs `body` unless the gate is closed; returns whether it ran.
    @discardableResult
    func deliver(_ body: () -> Void) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard isOpen else { return false }
        body()
        return true
    }

    /// Shuts the gate, after any delivery in progress on another thread has finished.
    func close() {
        lock.lock()
        isOpen = false
        lock.unlock()
    }

    /// Whether `close()` has not been called.
    var open: Bool {
        lock.lock()
        defer { lock.unlock() }
        return isOpen
    }
}
