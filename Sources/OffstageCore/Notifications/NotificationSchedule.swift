/// The local notifications of every app (SPEC NT-1, NT-2): pending requests with their next due instants, what was
/// delivered, badges, categories, and the responses waiting for an app's process.
///
/// One method per input, each returning the ``NotificationAction``s to carry out. The core composes it: it decides
/// where a firing goes from the app's state, and turns responses into lifecycle changes.
public struct NotificationSchedule: Hashable, Sendable {
    /// Pending requests by app, each app's in identifier order.
    private(set) var requests: [AppID: AppPendingRequests] = [:]
    /// What was delivered to the user, by app, oldest first.
    public private(set) var delivered: [AppID: [DeliveredNotification]] = [:]
    /// Delivered to the app in the foreground, waiting for its will-present handler to answer.
    public private(set) var awaitingApp: [DeliveryKey: DeliveredNotification] = [:]
    /// The number on each app's icon.
    public private(set) var badges: [AppID: Int] = [:]
    /// Each app's categories.
    public private(set) var categories: [AppID: [NotificationCategory]] = [:]
    /// The user's responses waiting until the app can receive them.
    var responses: [AppID: [NotificationResponse]] = [:]
    /// The device's time zone, for calendar triggers that name none.
    public private(set) var deviceTimeZone = "UTC"
    var dueQueue = DueQueue()

    /// Nothing pending.
    public init() {}

    /// The numbers the schedule decides with.
    public struct Limits: Hashable, Sendable {
        /// Pending requests per app; over it the soonest are kept (SPEC NT-1: 128).
        public var maximumPending: Int
        /// Delivered notifications kept per app; over it the oldest go.
        public var maximumDelivered: Int
        /// Bytes of text in one notification's content.
        public var maximumContentBytes: Int
        /// The shortest repeating time interval (SPEC NT-1: 60 s).
        public var minimumRepeatInterval: Double
        /// Delivered more than this after its due time, a notification is marked late.
        public var lateAfter: Duration
    }

    /// The next instant a notification is due, if any.
    public var nextDue: Instant? { dueQueue.heap.first?.due }

    /// Pending requests by app and identifier, built when read (every request is gone through): for looking at all of
    /// them; ``pending(_:identifier:)`` finds one.
    public var pending: [AppID: [String: PendingNotification]] {
        requests.mapValues { mine in Dictionary(uniqueKeysWithValues: mine.entries.map { ($0.identifier, $0) }) }
    }

    /// The app's pending request with this identifier.
    public func pending(_ app: AppID, identifier: String) -> PendingNotification? {
        requests[app]?[identifier]
    }

    /// The app's pending requests, soonest first.
    public func pending(of app: AppID) -> [PendingNotification] {
        (requests[app]?.entries ?? []).sorted { ($0.due, $0.identifier) < ($1.due, $1.identifier) }
    }

    /// The apps with pending or delivered notifications or a badge, in order.
    public var appsWithNotifications: [AppID] {
        Set(requests.keys).union(delivered.keys).union(badges.keys).sorted()
    }

    /// Every pending request, across apps.
    public var pendingCount: Int { requests.values.reduce(0) { $0 + $1.count } }

    // MARK: Restoring

    /// The schedule the store kept: its rows put back, without actions, the device's time zone UTC until the core's
    /// is set. Pure, so it can be built on any thread.
    public init(
        restoring pending: [(AppID, PendingNotification)], delivered: [DeliveredNotification], badges: [AppID: Int],
        categories: [AppID: [NotificationCategory]]
    ) {
        restore(pending: pending, delivered: delivered, badges: badges, categories: categories)
    }

    /// Every app with anything here: pending, delivered, waiting for its answer, a badge, categories, responses.
    var appsHoldingAnything: Set<AppID> {
        Set(requests.keys).union(delivered.keys).union(badges.keys).union(categories.keys).union(responses.keys)
            .union(awaitingApp.keys.map(\.app))
    }

    /// Puts back what the store kept, without actions.
    mutating func restore(
        pending rows: [(AppID, PendingNotification)], delivered records: [DeliveredNotification],
        badges: [AppID: Int], categories: [AppID: [NotificationCategory]]
    ) {
        var byApp: [AppID: [PendingNotification]] = [:]
        for (app, row) in rows { byApp[app, default: []].append(row) }
        requests = byApp.mapValues(AppPendingRequests.init)
        dueQueue.rebuild(requests)
        self.badges = badges
        self.categories = categories
        for record in records.sorted(by: { ($0.deliveredAt, $0.key) < ($1.deliveredAt, $1.key) }) {
            if record.route == .app {
                awaitingApp[record.key] = record
            } else {
                delivered[record.app, default: []].append(record)
            }
        }
    }

    /// Sets the device's time zone without recomputing anything (before the first input after a restart).
    mutating func restoreTimeZone(_ zone: String) { deviceTimeZone = zone }

    // MARK: The app's requests

    /// Adds a request, replacing any with its identifier. Over the limit the soonest are kept: the identifiers
    /// dropped come back; if the new request itself would be dropped it is refused and nothing changes.
    mutating func add(
        _ app: AppID, _ request: NotificationRequest, at now: Instant, limits: Limits
    ) throws(CoreError) -> (actions: [NotificationAction], dropped: [String]) {
        try NotificationRequest.validate(identifier: request.identifier)
        var request = request
        request.content = try request.content.validated(maximumBytes: limits.maximumContentBytes)
        request.trigger = try request.trigger.validated(minimumRepeatInterval: limits.minimumRepeatInterval)
        if !request.content.categoryIdentifier.isEmpty {
            try NotificationRequest.validate(identifier: request.content.categoryIdentifier)
        }
        guard let due = firstDue(of: request.trigger, addedAt: now) else {
            throw CoreError(
                .invalidArgument, "the trigger \(request.trigger.summary) never fires: no such date is ahead",
                fix: "give a date in the future, or fewer components")
        }
        let entry = PendingNotification(request: request, addedAt: now, due: due)
        var mine = requests[app] ?? AppPendingRequests()
        mine[request.identifier] = entry
        var dropped: [String] = []
        if mine.count > limits.maximumPending {
            let latestFirst = mine.entries.sorted { ($0.due, $0.identifier) > ($1.due, $1.identifier) }
            dropped = latestFirst.prefix(mine.count - limits.maximumPending).map(\.identifier)
            if dropped.contains(request.identifier) {
                throw CoreError(
                    .tooManyPendingRequests,
                    "the app has \(limits.maximumPending) pending notifications, all due before \(QuotedText.quote(request.identifier))",
                    fix: "remove pending notifications first, or schedule this one sooner; the soonest \(limits.maximumPending) are kept")
            }
            for identifier in dropped { mine[identifier] = nil }
        }
        requests[app] = mine
        dueQueue.insert(due: due, app: app, identifier: request.identifier)
        var actions: [NotificationAction] = []
        if !dropped.isEmpty { actions.append(.removePending(app, identifiers: dropped.sorted())) }
        actions.append(.savePending(app, entry))
        compactIfStale()
        return (actions, dropped.sorted())
    }

    /// Removes the app's pending requests with these identifiers (unknown ones are ignored, as on a phone).
    mutating func removePending(_ app: AppID, identifiers: [String]) -> [NotificationAction] {
        let present = Set(identifiers).filter { requests[app]?[$0] != nil }.sorted()
        guard !present.isEmpty else { return [] }
        for identifier in present { requests[app]?[identifier] = nil }
        if requests[app]?.isEmpty == true { requests[app] = nil }
        compactIfStale()
        return [.removePending(app, identifiers: present)]
    }

    /// Removes all the app's pending requests.
    mutating func removeAllPending(_ app: AppID) -> [NotificationAction] {
        removePending(app, identifiers: requests[app]?.entries.map(\.identifier) ?? [])
    }

    /// Removes delivered notifications of the app: those with these identifiers, or all when nil.
    mutating func removeDelivered(_ app: AppID, identifiers: [String]?) -> [NotificationAction] {
        let wanted = identifiers.map(Set.init)
        let mine = delivered[app] ?? []
        let removed = mine.filter { wanted?.contains($0.request.identifier) ?? true }
        guard !removed.isEmpty else { return [] }
        let keys = Set(removed.map(\.key))
        delivered[app] = mine.filter { !keys.contains($0.key) }
        if delivered[app]?.isEmpty == true { delivered[app] = nil }
        return [.removeDelivered(app, keys: removed.map(\.key))]
    }

    /// Sets the number on the app's icon (nil or 0 removes it).
    mutating func setBadge(_ app: AppID, _ badge: Int?) throws(CoreError) -> [NotificationAction] {
        if let badge { try NotificationContent.validate(badge: badge) }
        let value = badge == 0 ? nil : badge
        guard badges[app] != value else { return [] }
        badges[app] = value
        return [.saveBadge(app, value)]
    }

    /// Replaces the app's categories.
    mutating func setCategories(_ app: AppID, _ list: [NotificationCategory]) throws(CoreError) -> [NotificationAction] {
        try NotificationCategory.validate(list)
        let sorted = list.sorted { $0.identifier < $1.identifier }
        guard (categories[app] ?? []) != sorted else { return [] }
        categories[app] = sorted.isEmpty ? nil : sorted
        return [.saveCategories(app, sorted)]
    }

    // MARK: Time

    /// Where one firing goes, as the core decides from the app's state and settings.
    enum Destination: Hashable, Sendable {
        case user
        case app
        /// Notifications are off for the app (SPEC SET-2): it fires, and nobody is shown anything.
        case nobody
    }

    /// What firing the due notifications produced.
    struct Firings: Hashable, Sendable {
        var actions: [NotificationAction] = []
        /// Deliveries to an app in the foreground, for the core to send as will-present callbacks.
        var toApps: [DeliveredNotification] = []
        /// Deliveries suppressed because notifications are off, for the log.
        var suppressed: [DeliveryKey] = []
    }

    /// Fires every request due at `now`, each once, in due order: records the delivery and the request's next time
    /// in one action, then shows it to the user or hands it to the app.
    ///
    /// After downtime every request may be due at once (SPEC §11: 64,000): each firing is a few appends, and the next
    /// times of calendar triggers asked the same question (the same components after the same instant) are worked out
    /// once.
    mutating func fireDue(
        at now: Instant, limits: Limits, destination: (AppID) -> Destination
    ) -> Firings {
        var out = Firings()
        var answers = NotificationCalendar.Answers()
        while let entry = dueQueue.first, entry.due <= now {
            dueQueue.popFirst()
            guard let current = requests[entry.app]?[entry.identifier], current.due == entry.due else { continue }
            let next = nextDue(after: current, firedAt: now, answers: &answers)
            let following = next.map { PendingNotification(request: current.request, addedAt: current.addedAt, due: $0) }
            requests[entry.app]?[entry.identifier] = following
            if requests[entry.app]?.isEmpty == true { requests[entry.app] = nil }
            if let following { dueQueue.insert(due: following.due, app: entry.app, identifier: entry.identifier) }
            let late = now - current.due > limits.lateAfter
            let key = DeliveryKey(app: entry.app, identifier: entry.identifier, due: current.due)
            switch destination(entry.app) {
            case .nobody:
                out.actions.append(.fire(key, delivery: nil, next: following))
                out.suppressed.append(key)
            case .app:
                let record = DeliveredNotification(
                    app: entry.app, request: current.request, due: current.due, deliveredAt: now, late: late, route: .app)
                awaitingApp[key] = record
                out.actions.append(.fire(key, delivery: record, next: following))
                out.toApps.append(record)
            case .user:
                let record = DeliveredNotification(
                    app: entry.app, request: current.request, due: current.due, deliveredAt: now, late: late, route: .user)
                out.actions.append(.fire(key, delivery: record, next: following))
                toUser(record, limits: limits, into: &out.actions)
            }
        }
        compactIfStale()
        return out
    }

    /// Delivers a notification now that was never pending: an alert push (SPEC NT-4 "shown like local
    /// notifications"). Its key's due instant is when the push was accepted, so a push handed in again after a restart
    /// names the same delivery and is not shown twice (nothing happens if that delivery is already recorded). A
    /// delivered notification with the same identifier is replaced, as a push's collapse id replaces what it showed.
    mutating func deliverNow(
        _ app: AppID, _ request: NotificationRequest, due: Instant, at now: Instant, limits: Limits,
        destination: Destination
    ) -> Firings {
        var out = Firings()
        let key = DeliveryKey(app: app, identifier: request.identifier, due: due)
        if awaitingApp[key] != nil || delivered[app]?.contains(where: { $0.key == key }) == true { return out }
        let late = now - due > limits.lateAfter
        let replaced = delivered[app]?.filter { $0.request.identifier == request.identifier }.map(\.key) ?? []
        if !replaced.isEmpty {
            delivered[app]?.removeAll { replaced.contains($0.key) }
            out.actions.append(.removeDelivered(app, keys: replaced))
        }
        switch destination {
        case .nobody:
            out.suppressed.append(key)
        case .app:
            let record = DeliveredNotification(app: app, request: request, due: due, deliveredAt: now, late: late, route: .app)
            awaitingApp[key] = record
            out.actions.append(.fire(key, delivery: record, next: nil))
            out.toApps.append(record)
        case .user:
            let record = DeliveredNotification(app: app, request: request, due: due, deliveredAt: now, late: late, route: .user)
            out.actions.append(.fire(key, delivery: record, next: nil))
            toUser(record, limits: limits, into: &out.actions)
        }
        return out
    }

    /// Adds a record to the user's list, shows it, applies its badge, and trims the list to its limit: appends the
    /// actions for that, in order, to `actions`.
    private mutating func toUser(
        _ record: DeliveredNotification, limits: Limits, into actions: inout [NotificationAction]
    ) {
        // In place: a copy of the list for every firing would be a copy of up to `maximumDelivered` records each.
        delivered[record.app, default: []].append(record)
        let count = delivered[record.app]?.count ?? 0
        if count > limits.maximumDelivered {
            let old = delivered[record.app]?.prefix(count - limits.maximumDelivered).map(\.key) ?? []
            delivered[record.app]?.removeFirst(old.count)
            actions.append(.removeDelivered(record.app, keys: old))
        }
        actions.append(.show(record))
        if let badge = record.request.badge {
            let value = badge == 0 ? nil : badge
            if badges[record.app] != value {
                badges[record.app] = value
                actions.append(.saveBadge(record.app, value))
            }
        }
    }

    /// The app's will-present handler answered. With `presentToUser` (it asked for a banner or the list) the
    /// notification goes to the user too; otherwise its record is deleted.
    mutating func appAnswered(_ key: DeliveryKey, presentToUser: Bool, limits: Limits) -> [NotificationAction] {
        guard var record = awaitingApp.removeValue(forKey: key) else { return [] }
        guard presentToUser else { return [.removeDelivered(key.app, keys: [key])] }
        record.route = .user
        var actions: [NotificationAction] = [.updateDelivery(record)]
        toUser(record, limits: limits, into: &actions)
        return actions
    }

    /// The app cannot answer (its process ended, or the daemon restarted): what it had not answered goes to the user,
    /// so no notification is lost between the two.
    mutating func handToUser(_ app: AppID?, limits: Limits) -> [NotificationAction] {
        let keys = awaitingApp.keys.filter { app == nil || $0.app == app }.sorted()
        return keys.flatMap { appAnswered($0, presentToUser: true, limits: limits) }
    }

    /// The device's time zone changed: triggers that follow it get their next time again.
    mutating func timeZoneChanged(to zone: String, at now: Instant) -> [NotificationAction] {
        guard zone != deviceTimeZone else { return [] }
        deviceTimeZone = zone
        var actions: [NotificationAction] = []
        var answers = NotificationCalendar.Answers()
        for app in requests.keys.sorted() {
            for entry in requests[app]?.entries ?? [] {
                let identifier = entry.identifier
                guard case .calendar(let match, _) = entry.request.trigger, match.timeZone == nil else { continue }
                guard let due = answers.next(after: now, matching: match, deviceZone: zone) else {
                    requests[app]?[identifier] = nil
                    actions.append(.removePending(app, identifiers: [identifier]))
                    continue
                }
                guard due != entry.due else { continue }
                let moved = PendingNotification(request: entry.request, addedAt: entry.addedAt, due: due)
                requests[app]?[identifier] = moved
                dueQueue.insert(due: due, app: app, identifier: identifier)
                actions.append(.savePending(app, moved))
            }
            if requests[app]?.isEmpty == true { requests[app] = nil }
        }
        compactIfStale()
        return actions
    }

    // MARK: The user's responses

    /// What the user's choice of `action` on the app's delivered notification `identifier` (the newest with it) means:
    /// the response and, for a category's action, its button. Changes nothing.
    func response(
        _ app: AppID, identifier: String, action: String
    ) throws(CoreError) -> (response: NotificationResponse, button: NotificationActionButton?) {
        guard let record = delivered[app]?.last(where: { $0.request.identifier == identifier }) else {
            throw CoreError(
                .noSuchNotification, "the app has no delivered notification \(QuotedText.quote(identifier))",
                fix: "see `offstage notifications \(app)` for what was delivered")
        }
        var button: NotificationActionButton?
        if action != NotificationResponse.defaultAction, action != NotificationResponse.dismissAction {
            let category = categories[app]?.first { $0.identifier == record.request.content.categoryIdentifier }
            guard let found = category?.actions.first(where: { $0.identifier == action }) else {
                let offered = (category?.actions.map(\.identifier) ?? []) + ["default", "dismiss"]
                throw CoreError(
                    .invalidArgument, "notification \(QuotedText.quote(identifier)) offers no action \(QuotedText.quote(action))",
                    fix: "use one of \(offered.joined(separator: ", "))")
            }
            button = found
        }
        return (NotificationResponse(notification: record, actionIdentifier: action), button)
    }

    /// The user responded to a delivered notification: it leaves the list.
    mutating func responded(_ response: NotificationResponse) -> [NotificationAction] {
        let key = response.notification.key
        delivered[key.app]?.removeAll { $0.key == key }
        if delivered[key.app]?.isEmpty == true { delivered[key.app] = nil }
        return [.removeDelivered(key.app, keys: [key])]
    }

    /// Keeps a response until the app's process can receive it.
    mutating func hold(_ response: NotificationResponse) {
        responses[response.notification.app, default: []].append(response)
    }

    /// The responses waiting for the app, oldest first, taken.
    mutating func takeResponses(_ app: AppID) -> [NotificationResponse] {
        responses.removeValue(forKey: app) ?? []
    }

    // MARK: Uninstall

    /// The app is uninstalled: everything of it goes.
    mutating func forget(_ app: AppID) -> [NotificationAction] {
        let had = requests[app] != nil || delivered[app] != nil || badges[app] != nil || categories[app] != nil
            || awaitingApp.keys.contains { $0.app == app }
        requests[app] = nil
        delivered[app] = nil
        badges[app] = nil
        categories[app] = nil
        responses[app] = nil
        awaitingApp = awaitingApp.filter { $0.key.app != app }
        compactIfStale()
        return had ? [.forgetApp(app)] : []
    }

    // MARK: Due times

    /// When a request added at `addedAt` first fires, in whole milliseconds (so a due time read back from the wire
    /// names the same firing); nil if it never will.
    func firstDue(of trigger: NotificationTrigger, addedAt: Instant) -> Instant? {
        exactFirstDue(of: trigger, addedAt: addedAt)?.roundedUpToMillisecond
    }

    private func exactFirstDue(of trigger: NotificationTrigger, addedAt: Instant) -> Instant? {
        switch trigger {
        case .timeInterval(let seconds, _): return addedAt + .seconds(double: seconds)
        case .calendar(let match, _): return NotificationCalendar.next(after: addedAt, matching: match, deviceZone: deviceTimeZone)
        // A date already past fires at once, as `UILocalNotification` does.
        case .date(let instant): return max(instant, addedAt)
        }
    }

    /// When a request that fired at `firedAt` (due at `entry.due`) fires next; nil if it does not repeat. A repeating
    /// request whose times passed while the daemon was down fires once for all of them, then at its next time ahead.
    func nextDue(after entry: PendingNotification, firedAt: Instant) -> Instant? {
        var answers = NotificationCalendar.Answers()
        return nextDue(after: entry, firedAt: firedAt, answers: &answers)
    }

    /// ``nextDue(after:firedAt:)``, with calendar answers already worked out.
    private func nextDue(
        after entry: PendingNotification, firedAt: Instant, answers: inout NotificationCalendar.Answers
    ) -> Instant? {
        switch entry.request.trigger {
        case .timeInterval(let seconds, true):
            // Counted from when it was added, not from the last due time (rounded up to a whole millisecond), so the
            // roundings never add up: the k-th time is the first millisecond at or after added + k·interval.
            let step = max(1, Duration.seconds(double: seconds).nanoseconds)
            let intervals = max(0, (max(entry.due, firedAt) - entry.addedAt).nanoseconds / step)
            return (entry.addedAt + .nanoseconds((intervals + 1) * step)).roundedUpToMillisecond
        case .calendar(let match, true):
            return answers.next(after: max(entry.due, firedAt), matching: match, deviceZone: deviceTimeZone)
        default:
            return nil
        }
    }

    /// Rebuilds the queue when stale entries outnumber the live ones, so replacing requests cannot grow it without end.
    private mutating func compactIfStale() {
        let live = pendingCount
        guard dueQueue.count > 2 * live + 64 else { return }
        dueQueue.rebuild(requests)
    }
}

extension Instant {
    /// The first whole millisecond at or after this instant.
    var roundedUpToMillisecond: Instant {
        let remainder = nanosecondsSinceEpoch % 1_000_000
        guard remainder != 0 else { return self }
        return Instant(nanosecondsSinceEpoch: nanosecondsSinceEpoch - remainder + (remainder > 0 ? 1_000_000 : 0))
    }
}
