/// Background pushes on their way into apps (SPEC NT-4): each app's budget of wakes, and the push held for it while
/// it has none. Over budget, background pushes are held and coalesced: an app keeps only its newest held push, the
/// older ones are finished with a record naming the newer one, and the held one is delivered when the budget returns
/// (unless it expires first, which is recorded too).
///
/// One method per input, returning the ``PushAction``s to persist; the core decides everything about the app itself
/// (whether it may be woken, launching it, its handler's deadline).
public struct PushInbox: Hashable, Sendable {
    /// Each app's budget, once it has been woken for a push.
    public private(set) var budgets: [AppID: PushBudget] = [:]
    /// The push held for each app, waiting for its budget.
    public private(set) var held: [AppID: RemotePush] = [:]
    /// When each newsstand app was last woken for a new issue (SPEC MODE-5). Like the budgets, not stored: after a
    /// restart an app may be woken at once.
    public private(set) var newsstandWakes: [AppID: Instant] = [:]

    /// The newsstand app was woken for a new issue at `now`.
    mutating func newsstandWoke(_ app: AppID, at now: Instant) { newsstandWakes[app] = now }

    /// Nothing held, every budget full.
    public init() {}

    /// Takes one wake from the app's budget at `now`; false when it has none.
    mutating func takeWake(_ app: AppID, at now: Instant, _ limits: PushBudget.Limits) -> Bool {
        var budget = budgets[app] ?? PushBudget(full: limits, at: now)
        let taken = budget.take(at: now, limits)
        budgets[app] = budget
        return taken
    }

    /// Holds `push` for its app, replacing (and finishing, as coalesced) the one held before.
    mutating func hold(_ push: RemotePush) -> [PushAction] {
        var actions: [PushAction] = []
        if let older = held[push.app], older.id != push.id {
            actions.append(.finish(id: older.id, app: older.app, .coalesced(into: push.id)))
        }
        held[push.app] = push
        actions.append(.hold(push))
        return actions
    }

    /// When something held must be looked at: its app's budget has a wake again, or it expires.
    func nextRelease(_ limits: PushBudget.Limits) -> Instant? {
        var earliest: Instant?
        for (app, push) in held {
            let budget = budgets[app]
            let wake = budget.map { $0.nextWake(after: $0.at, limits) } ?? push.acceptedAt
            for candidate in [wake, push.expiresAt].compactMap({ $0 }) where earliest == nil || candidate < earliest! {
                earliest = candidate
            }
        }
        return earliest
    }

    /// Takes out the held pushes whose app has a wake again at `now`, or which expired: the caller delivers the first
    /// and finishes the second. In app order.
    mutating func release(at now: Instant, _ limits: PushBudget.Limits) -> (ready: [RemotePush], expired: [RemotePush]) {
        var ready: [RemotePush] = []
        var expired: [RemotePush] = []
        for app in held.keys.sorted() {
            guard let push = held[app] else { continue }
            if push.expired(at: now) {
                held[app] = nil
                expired.append(push)
            } else if (budgets[app]?.wakes(at: now, limits) ?? 1) >= 1 {
                held[app] = nil
                ready.append(push)
            }
        }
        return (ready, expired)
    }

    /// Takes out the push held for `app`, if any (it is delivered now: the user opened the app).
    mutating func takeHeld(_ app: AppID) -> RemotePush? { held.removeValue(forKey: app) }

    /// The app is gone: its held push is finished with `reason`, its budget forgotten.
    mutating func forget(_ app: AppID, reason: String) -> [PushAction] {
        budgets[app] = nil
        newsstandWakes[app] = nil
        guard let push = held.removeValue(forKey: app) else { return [] }
        return [.finish(id: push.id, app: app, .notDelivered(reason))]
    }

    /// Puts back the pushes the store kept held, after a restart: the newest per app (an older one of the same app
    /// is finished as coalesced); no budget is known, so each app's is full.
    mutating func restore(held pushes: [RemotePush]) -> [PushAction] {
        var actions: [PushAction] = []
        for push in pushes.sorted(by: { ($0.acceptedAt, $0.id) < ($1.acceptedAt, $1.id) }) {
            actions += hold(push).filter { if case .hold = $0 { false } else { true } }
        }
        return actions
    }
}
