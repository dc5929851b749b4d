/// One app's pending requests, sorted by identifier and found by binary search: 24 bytes each, where a dictionary
/// would take twice that or more (its own copy of the key, and its free slots). An app has at most
/// `maximumPendingNotificationsPerApp` (SPEC NT-1: 128), so moving the ones after an insertion is a small copy.
struct AppPendingRequests: Hashable, Sendable {
    /// The requests, in identifier order.
    private(set) var entries: [PendingNotification] = []

    init() {}

    /// These requests; of two with the same identifier, the later one.
    init(_ rows: [PendingNotification]) {
        let sorted = rows.indices.sorted { (rows[$0].identifier, $0) < (rows[$1].identifier, $1) }
        entries.reserveCapacity(sorted.count)
        for index in sorted {
            if let last = entries.last, last.identifier == rows[index].identifier {
                entries[entries.count - 1] = rows[index]
            } else {
                entries.append(rows[index])
            }
        }
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// The request with this identifier.
    subscript(identifier: String) -> PendingNotification? {
        get {
            let (index, found) = place(of: identifier)
            return found ? entries[index] : nil
        }
        set {
            let (index, found) = place(of: identifier)
            switch (found, newValue) {
            case (true, let entry?): entries[index] = entry
            case (true, nil): entries.remove(at: index)
            case (false, let entry?): entries.insert(entry, at: index)
            case (false, nil): break
            }
        }
    }

    /// Where the request with `identifier` is, or would go.
    private func place(of identifier: String) -> (index: Int, found: Bool) {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let here = entries[middle].identifier
            if here == identifier { return (middle, true) }
            if here < identifier { low = middle + 1 } else { high = middle }
        }
        return (low, false)
    }
}
