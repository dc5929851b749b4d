/// The pending notifications ordered by due time: a binary min-heap of (due, app, identifier), so the next one due is
/// found in constant time and adding one costs a logarithm, with 64,000 pending (SPEC §11 scale).
///
/// An entry names its app by a small number (the app's place in ``apps``), so it is 32 bytes; entries due at the same
/// instant still come out in the order of their apps' identifiers, then their own.
///
/// Entries are not removed when a request is replaced or cancelled: the schedule skips an entry whose request no
/// longer has that due time, and the heap is rebuilt from the live requests once stale entries outnumber them.
struct DueQueue: Hashable, Sendable {
    /// One due time of one request.
    struct Entry: Hashable, Sendable {
        var due: Instant
        var identifier: String
        /// The app's place in ``DueQueue/apps``.
        var app: UInt32
    }

    private(set) var heap: [Entry] = []
    /// The apps the entries name, by number: an app keeps its number until the heap is rebuilt.
    private(set) var apps: [AppID] = []
    private var numbers: [AppID: UInt32] = [:]

    var count: Int { heap.count }

    /// The entry due first.
    var first: (due: Instant, app: AppID, identifier: String)? {
        heap.first.map { ($0.due, apps[Int($0.app)], $0.identifier) }
    }

    mutating func insert(due: Instant, app: AppID, identifier: String) {
        heap.append(Entry(due: due, identifier: identifier, app: number(of: app)))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() {
        guard !heap.isEmpty else { return }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        siftDown(0)
    }

    /// Replaces the contents with one entry for each of these requests (numbering the apps afresh).
    mutating func rebuild(_ pending: [AppID: AppPendingRequests]) {
        apps = []
        numbers = [:]
        heap = []
        heap.reserveCapacity(pending.values.reduce(0) { $0 + $1.count })
        for (app, mine) in pending {
            let number = number(of: app)
            for entry in mine.entries { heap.append(Entry(due: entry.due, identifier: entry.identifier, app: number)) }
        }
        // Floyd's: every parent sifted down, from the last one up, in linear time.
        for parent in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(parent) }
    }

    private mutating func number(of app: AppID) -> UInt32 {
        if let number = numbers[app] { return number }
        let number = UInt32(apps.count)
        apps.append(app)
        numbers[app] = number
        return number
    }

    private func precedes(_ lhs: Entry, _ rhs: Entry) -> Bool {
        if lhs.due != rhs.due { return lhs.due < rhs.due }
        if lhs.app != rhs.app { return apps[Int(lhs.app)] < apps[Int(rhs.app)] }
        return lhs.identifier < rhs.identifier
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, precedes(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, precedes(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
