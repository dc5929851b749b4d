import Synchronization

/// The pulls of one node waiting for a push, by device: woken by the node's `NOTIFY`, or all at once when the node
/// shuts down or its `LISTEN` connection came back (a notification may have been missed meanwhile).
///
/// A pull registers its ticket *before* it looks for stored pushes, so a wake-up between that look and the wait is
/// kept in the ticket and not lost.
final class PushWaiters: Sendable {
    /// A registered wait.
    struct Ticket: Hashable, Sendable {
        fileprivate let id: UInt64
        fileprivate let device: String
    }

    private struct Entry {
        var fired = false
        var continuation: CheckedContinuation<Void, Never>?
    }

    private struct State {
        var next: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
        var byDevice: [String: Set<UInt64>] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// Whether ``close()`` was called: waits end at once.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// How many waits are registered.
    var count: Int { state.withLock { $0.entries.count } }

    /// Registers a wait for a push to `device`; already fired once the node is closing.
    func register(device: String) -> Ticket {
        state.withLock { state in
            state.next += 1
            let id = state.next
            state.entries[id] = Entry(fired: state.closed)
            state.byDevice[device, default: []].insert(id)
            return Ticket(id: id, device: device)
        }
    }

    /// Forgets `ticket` (after its wait, or when the pull needed none).
    func remove(_ ticket: Ticket) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.byDevice[ticket.device]?.remove(ticket.id)
            if state.byDevice[ticket.device]?.isEmpty == true { state.byDevice[ticket.device] = nil }
            return state.entries.removeValue(forKey: ticket.id)?.continuation
        }
        continuation?.resume()
    }

    /// Wakes the waits for `device`.
    func wake(device: String) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            (state.byDevice[device] ?? []).compactMap { Self.fire($0, in: &state) }
        }
        woken.forEach { $0.resume() }
    }

    /// Wakes every wait (the `LISTEN` connection was re-established); with `closing`, later waits end at once too.
    func wakeAll(closing: Bool = false) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if closing { state.closed = true }
            return Array(state.entries.keys).compactMap { Self.fire($0, in: &state) }
        }
        woken.forEach { $0.resume() }
    }

    /// Waits until `ticket` is woken, `timeout` passes, or the task is cancelled.
    func wait(_ ticket: Ticket, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.suspend(ticket) }
            await group.next()
            group.cancelAll()
            // The suspended child, if it is the one still running, ends on the cancellation.
        }
    }

    private func suspend(_ ticket: Ticket) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    guard var entry = state.entries[ticket.id], !entry.fired, !Task.isCancelled else { return true }
                    entry.continuation = continuation
                    state.entries[ticket.id] = entry
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state in Self.fire(ticket.id, in: &state) }
            continuation?.resume()
        }
    }

    /// Marks entry `id` fired and takes its continuation, if it is suspended.
    private static func fire(_ id: UInt64, in state: inout State) -> CheckedContinuation<Void, Never>? {
        guard var entry = state.entries[id] else { return nil }
        entry.fired = true
        let continuation = entry.continuation
        entry.continuation = nil
        state.entries[id] = entry
        return continuation
    }
}
