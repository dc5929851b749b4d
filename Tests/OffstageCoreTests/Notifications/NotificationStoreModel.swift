import OffstageCore

/// The notification rows a daemon's store would hold, kept only by carrying out the core's ``NotificationAction``s
/// in order, as their documentation says: what a restarted daemon reads back (SPEC NT-2, §11 "a crash or kill -9 of
/// the daemon at any point … delivers no notification twice").
///
/// Its checks are the store's own constraints: a firing must be of the row that is pending with that due time (a
/// firing of anything else fires a notification nobody asked for, or one twice), and a delivery record's key is
/// inserted at most once (the store ignores a second insert, so a second firing of one key is a duplicate the desktop
/// would show again after a restart).
struct NotificationStoreModel: Hashable, Sendable {
    /// Pending rows by app and identifier.
    var pending: [AppID: [String: PendingNotification]] = [:]
    /// Delivery records (to the user, or to the app in front and not yet answered) by key.
    var delivered: [DeliveryKey: DeliveredNotification] = [:]
    /// The number on each app's icon.
    var badges: [AppID: Int] = [:]
    /// Each app's categories.
    var categories: [AppID: [NotificationCategory]] = [:]

    /// Carries out one action; returns what it broke, if anything. `pushAlert` says a firing is a push's alert,
    /// shown at once with no pending row (SPEC NT-4): its key's due time is when the gateway accepted the push.
    mutating func apply(_ action: NotificationAction, pushAlert: Bool = false) -> [String] {
        var problems: [String] = []
        switch action {
        case .savePending(let app, let row):
            pending[app, default: [:]][row.identifier] = row
        case .removePending(let app, let identifiers):
            for identifier in identifiers {
                if pending[app]?[identifier] == nil {
                    problems.append("removePending of \(app)/\(identifier), which is not pending")
                }
                pending[app]?[identifier] = nil
            }
            if pending[app]?.isEmpty == true { pending[app] = nil }
        case .fire(let key, let delivery, let next):
            let row = pending[key.app]?[key.identifier]
            if row?.due != key.due, !pushAlert || row != nil {
                let what = row.map { "pending with due \($0.due.nanosecondsSinceEpoch)" } ?? "not pending"
                problems.append("fired \(key), which is \(what)")
            }
            if let delivery {
                if delivery.key != key { problems.append("fired \(key) with the delivery record of \(delivery.key)") }
                if delivered[key] != nil {
                    problems.append("fired \(key) again: its delivery record is already stored")
                } else {
                    delivered[key] = delivery
                }
            }
            if let next {
                if next.identifier != key.identifier || next.due <= key.due {
                    problems.append("fired \(key) with a next occurrence \(next.identifier)@\(next.due) not after it")
                }
                pending[key.app, default: [:]][key.identifier] = next
            } else {
                pending[key.app]?[key.identifier] = nil
                if pending[key.app]?.isEmpty == true { pending[key.app] = nil }
            }
        case .show:
            break  // the desktop's business, not the store's
        case .updateDelivery(let record):
            if delivered[record.key] == nil { problems.append("updateDelivery of \(record.key), which is not stored") }
            delivered[record.key] = record
        case .removeDelivered(_, let keys):
            for key in keys { delivered[key] = nil }
        case .saveBadge(let app, let badge):
            badges[app] = badge
        case .saveCategories(let app, let list):
            categories[app] = list.isEmpty ? nil : list
        case .forgetApp(let app):
            pending[app] = nil
            badges[app] = nil
            categories[app] = nil
            delivered = delivered.filter { $0.key.app != app }
        }
        return problems
    }

    /// Carries out every notification action among `actions`.
    mutating func apply(_ actions: [CoreAction]) -> [String] {
        actions.flatMap { action -> [String] in
            guard case .notification(let notification) = action else { return [] }
            return apply(notification)
        }
    }

    /// The pending rows as a restarted daemon reads them back, in a stable order.
    var rows: [(AppID, PendingNotification)] {
        pending.keys.sorted().flatMap { app in
            (pending[app] ?? [:]).keys.sorted().map { (app, pending[app]![$0]!) }
        }
    }

    /// The delivery records as a restarted daemon reads them back, in a stable order.
    var records: [DeliveredNotification] { delivered.keys.sorted().map { delivered[$0]! } }

    /// Puts what the store holds back into a core that has just been restored (SPEC NT-2 across restarts).
    func restore(into core: inout OffstageCore) {
        core.restoreNotifications(pending: rows, delivered: records, badges: badges, categories: categories)
    }

    /// Whether the store and the core's state agree: the quick check, made after every input of the model-based
    /// tests, before ``differences(from:)`` says how they differ.
    func matches(_ schedule: NotificationSchedule) -> Bool {
        guard pending == schedule.pending, badges == schedule.badges, categories == schedule.categories else {
            return false
        }
        var keys: Set<DeliveryKey> = []
        for (key, record) in schedule.awaitingApp {
            guard delivered[key] == record, keys.insert(key).inserted else { return false }
        }
        for record in schedule.delivered.values.joined() {
            guard delivered[record.key] == record, keys.insert(record.key).inserted else { return false }
        }
        return keys.count == delivered.count
    }

    /// Where the store and the core's state differ: pending rows, delivery records (the user's and those the app in
    /// front has not answered), badges and categories. Empty when they agree.
    func differences(from schedule: NotificationSchedule) -> [String] {
        guard !matches(schedule) else { return [] }
        var found: [String] = []
        for app in Set(pending.keys).union(schedule.pending.keys).sorted() {
            let stored = pending[app] ?? [:]
            let held = schedule.pending[app] ?? [:]
            for identifier in Set(stored.keys).union(held.keys).sorted() where stored[identifier] != held[identifier] {
                let describe = { (row: PendingNotification?) in
                    row.map { "due \($0.due.nanosecondsSinceEpoch)" } ?? "none"
                }
                found.append(
                    "pending \(app)/\(identifier): store has \(describe(stored[identifier])), core has "
                        + describe(held[identifier]))
            }
        }
        var records: [DeliveryKey: DeliveredNotification] = schedule.awaitingApp
        for record in schedule.delivered.values.joined() {
            if records[record.key] != nil { found.append("the core holds \(record.key) twice") }
            records[record.key] = record
        }
        for key in Set(delivered.keys).union(records.keys).sorted() where delivered[key] != records[key] {
            let describe = { (record: DeliveredNotification?) in
                record.map { "route \($0.route.rawValue), late \($0.late)" } ?? "none"
            }
            found.append(
                "delivered \(key): store has \(describe(delivered[key])), core has \(describe(records[key]))")
        }
        if badges != schedule.badges { found.append("badges: store has \(badges), core has \(schedule.badges)") }
        if categories != schedule.categories {
            found.append(
                "categories: store has \(categories.mapValues { $0.map(\.identifier) }), core has "
                    + "\(schedule.categories.mapValues { $0.map(\.identifier) })")
        }
        return found
    }
}
