import OffstageCore

/// What the daemon knows of its deliveries on the desktop (SPEC NT-2): the desktop it shows them on, if any; where
/// each delivery stands (the store's `desktopState`); the desktop's id for each shown one, so a click finds its
/// notification and a removal takes it off the desktop; and the requests the desktop has not answered yet.
///
/// Bookkeeping only: the engine records each step in the store and talks to the desktop
/// (`DaemonEngine+Notifications.swift`).
struct DesktopPresentation {
    /// One delivery's standing.
    struct Entry: Hashable, Sendable {
        var state: OffstageStore.DesktopState
        var desktopID: UInt32?
    }

    /// What to do with a delivery the core asks to show.
    enum ShowDecision: Hashable, Sendable {
        /// It was handed to a desktop before, will never be shown, or has no row (its firing was not recorded).
        case skip
        /// There is no desktop: record that it will never be shown, so a later start does not show it stale.
        case markNone
        /// Record it as shown, then hand it to the desktop with this token.
        case send(token: UInt64)
    }

    /// The desktop, while there is one.
    private(set) var desktop: (any NotificationDesktop)?
    /// Why there is no desktop, for the log.
    private(set) var unavailableReason = "not connected yet"
    /// Milliseconds before the desktop hides a notification (-1: the desktop decides).
    var expireTimeout: Int32 = -1
    private(set) var entries: [DeliveryKey: Entry] = [:]
    private var keysByDesktopID: [UInt32: DeliveryKey] = [:]
    /// Requests the desktop has not answered, by token.
    private var unanswered: [UInt64: DeliveryKey] = [:]
    private var nextToken: UInt64 = 1

    /// Nothing known.
    init() {}

    /// Takes back what the store kept.
    mutating func restore(_ rows: [OffstageStore.StoredDelivery]) {
        for row in rows {
            entries[row.record.key] = Entry(state: row.desktopState, desktopID: row.desktopID)
            if let id = row.desktopID { keysByDesktopID[id] = row.record.key }
        }
    }

    /// Notifications go to `desktop` from now on.
    mutating func connect(_ desktop: any NotificationDesktop) {
        self.desktop = desktop
    }

    /// There is no desktop, for `reason`: deliveries are not shown from now on.
    mutating func disconnect(_ reason: String) {
        desktop = nil
        unavailableReason = reason
        // Unanswered requests will never be: their rows stay `shown` (they may be on the screen), with no id.
        unanswered.removeAll()
    }

    /// A firing recorded a new delivery row.
    mutating func recorded(_ key: DeliveryKey) {
        entries[key] = Entry(state: .pending, desktopID: nil)
    }

    /// Decides what a `show` of `key` does, and counts it as done (the engine records it before acting).
    mutating func show(_ key: DeliveryKey) -> ShowDecision {
        guard let entry = entries[key], entry.state == .pending else { return .skip }
        guard desktop != nil else {
            entries[key]?.state = .none
            return .markNone
        }
        let token = nextToken
        nextToken += 1
        entries[key]?.state = .shown
        unanswered[token] = key
        return .send(token: token)
    }

    /// The desktop showed the request of `token` as `desktopID`: the delivery it belongs to, and whether that was
    /// removed in the meantime (then it must come off the desktop again).
    mutating func shown(token: UInt64, desktopID: UInt32) -> (key: DeliveryKey, removed: Bool)? {
        guard let key = unanswered.removeValue(forKey: token) else { return nil }
        guard entries[key] != nil else { return (key, true) }
        entries[key]?.desktopID = desktopID
        keysByDesktopID[desktopID] = key
        return (key, false)
    }

    /// The desktop refused the request of `token` (or it could not be sent): its delivery, now never to be shown.
    mutating func failed(token: UInt64) -> DeliveryKey? {
        guard let key = unanswered.removeValue(forKey: token) else { return nil }
        guard entries[key] != nil else { return nil }
        entries[key]?.state = .none
        return key
    }

    /// The delivery whose notification has `desktopID` on the desktop.
    func key(forDesktopID desktopID: UInt32) -> DeliveryKey? {
        keysByDesktopID[desktopID]
    }

    /// The notification `desktopID` left the desktop: its delivery, which no longer has an id there (desktops reuse
    /// ids, so withdrawing by it later could close another notification).
    mutating func closed(desktopID: UInt32) -> DeliveryKey? {
        guard let key = keysByDesktopID.removeValue(forKey: desktopID) else { return nil }
        entries[key]?.desktopID = nil
        return key
    }

    /// Deliveries deleted: the desktop ids to withdraw. Requests still unanswered are withdrawn when answered.
    mutating func removed(_ keys: [DeliveryKey]) -> [UInt32] {
        keys.compactMap { key in
            guard let id = entries.removeValue(forKey: key)?.desktopID else { return nil }
            keysByDesktopID[id] = nil
            return id
        }
    }

    /// Every delivery of `app` deleted (uninstall): the desktop ids to withdraw.
    mutating func forget(_ app: AppID) -> [UInt32] {
        removed(entries.keys.filter { $0.app == app })
    }
}
