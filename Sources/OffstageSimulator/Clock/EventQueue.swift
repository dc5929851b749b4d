import OffstageCore

/// Events ordered by time and, at equal times, by the order they were scheduled (so runs are repeatable).
public struct EventQueue<Event: Sendable>: Sendable {
    struct Item: Sendable {
        var at: Instant
        var sequence: UInt64
        var event: Event
    }

    var items: [Item] = []
    var nextSequence: UInt64 = 0

    /// An empty queue.
    public init() {}

    /// The time of the earliest event.
    public var nextTime: Instant? { items.first?.at }

    /// Whether nothing is scheduled.
    public var isEmpty: Bool { items.isEmpty }

    /// Schedules an event.
    public mutating func schedule(_ event: Event, at instant: Instant) {
        let item = Item(at: instant, sequence: nextSequence, event: event)
        nextSequence += 1
        // Binary search for the insertion point keeps the queue sorted by (time, sequence).
        var low = 0
        var high = items.count
        while low < high {
            let mid = (low + high) / 2
            if items[mid].at <= instant { low = mid + 1 } else { high = mid }
        }
        items.insert(item, at: low)
    }

    /// Removes and returns the earliest event if it is due at or before `now`.
    public mutating func popDue(at now: Instant) -> (Instant, Event)? {
        guard let first = items.first, first.at <= now else { return nil }
        items.removeFirst()
        return (first.at, first.event)
    }

    /// Removes every event matching `predicate`.
    public mutating func removeAll(where predicate: (Event) -> Bool) {
        items.removeAll { predicate($0.event) }
    }

    /// The events matching `predicate`, with their times.
    public func filter(_ predicate: (Event) -> Bool) -> [(Instant, Event)] {
        items.filter { predicate($0.event) }.map { ($0.at, $0.event) }
    }
}
