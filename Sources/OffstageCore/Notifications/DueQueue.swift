/// The pending notifications ordered by due time: a binary min-heap of (due, app, identifier), so the next one due is
/// found in constant time and adding one costs a logarithm, with 64,000 pending (SPEC §11 scale).
///
/// Entries are not removed when a request is replaced or cancelled: the schedule skips an entry whose request no
/// longer has that due time, and the heap is rebuilt from the live requests once stale entries outnumber them.
struct DueQueue: Hashable, Sendable {
    struct Entry: Hashable, Sendable, Comparable {
        var due: Instant
        var app: AppID
        var identifier: String

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.due, lhs.app, lhs.identifier) < (rhs.due, rhs.app, rhs.identifier)
        }
    }

    private(set) var heap: [Entry] = []

    var count: Int { heap.count }
    var first: Entry? { heap.first }

    mutating func insert(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child] < heap[parent] else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popFirst() -> Entry? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left] < heap[smallest] { smallest = left }
            if right < heap.count, heap[right] < heap[smallest] { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    /// Replaces the contents with exactly these entries.
    mutating func rebuild(_ entries: [Entry]) {
        heap = entries.sorted()
    }
}
