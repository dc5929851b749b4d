import OffstageCore

/// Where a push's inbox row stands in the daemon's store (decision 0033): accepted, held over budget, handed to the
/// app's handler (marked before the callback goes out), or done with its outcome. A held push released to its
/// handler when the budget returns stays held in the store until its callback goes out: a restart before that holds
/// it again, which is safe, as its handler was never called.
enum PushRowState: Hashable, Sendable, CustomStringConvertible {
    case accepted
    case held
    case handed
    case done(PushOutcome)

    var description: String {
        switch self {
        case .accepted: "accepted"
        case .held: "held"
        case .handed: "handed"
        case .done(let outcome): "done (\(outcome))"
        }
    }
}

/// One push's row: the push, when it arrived among the others, and where it stands.
struct ModelPushRow: Hashable, Sendable {
    /// The push as the gateway handed it in.
    var push: RemotePush
    /// Its place in the order of arrival (1 for the first push of the session).
    var order: Int
    /// Where it stands.
    var state: PushRowState
}

/// What the daemon's store would hold of the pushes, built from the push actions and the remote-notification
/// callbacks alone (SPEC NT-4, NT-5), and what the shell saw of the core's handler runs and wakes. The invariants
/// compare it with the core after every input; a restart reads it back as the daemon reads its store.
struct ModelPushes: Hashable, Sendable {
    /// Every push handed in this session, by `apns-id`.
    var rows: [String: ModelPushRow] = [:]
    /// How many pushes have been handed in (the next is `p<count + 1>`).
    var count = 0
    /// The run each push was handed to the app in: a push is handed at most once, across restarts too.
    var handed: [String: UInt64] = [:]
    /// The handler runs the core had after the last input, by push.
    var running: [String: PushRun] = [:]
    /// Per app, when each wake that spent its budget happened since the budget was last full (the app installed
    /// again, or the daemon restarted: the budget is not stored).
    var wakes: [AppID: [Instant]] = [:]

    /// The next push's `apns-id`.
    mutating func nextID() -> String {
        count += 1
        return "p\(count)"
    }

    /// Whether `key` is the alert of a push that arrived: its identifier and due time (SPEC NT-4).
    func isAlert(_ key: DeliveryKey) -> Bool {
        rows.values.contains {
            $0.push.app == key.app && $0.push.notificationIdentifier == key.identifier && $0.push.acceptedAt == key.due
        }
    }

    /// The gateway accepted `push`: its row is written before the core sees it.
    mutating func accept(_ push: RemotePush) -> RemotePush {
        // As the daemon's store: an acceptance instant another push of the app has is moved a microsecond back.
        var stored = push
        while rows.values.contains(where: { $0.push.app == push.app && $0.push.acceptedAt == stored.acceptedAt }) {
            stored.acceptedAt = stored.acceptedAt - .microseconds(1)
        }
        rows[push.id] = ModelPushRow(push: stored, order: count, state: .accepted)
        return stored
    }

    /// The store takes one push action; returns what it finds wrong with it (and takes it anyway).
    mutating func apply(_ action: PushAction) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        switch action {
        case .hold(let push):
            guard let row = rows[push.id] else {
                found.append((.pushAccountedFor, "\(push.id) held, though it never arrived"))
                break
            }
            if row.state != .accepted {
                found.append((.pushAccountedFor, "\(push.id) held while \(row.state)"))
            }
            if push.attemptOnce {
                found.append((.pushHeld, "\(push.id) has expiration 0 (deliver now or never) and was held"))
            }
            rows[push.id]?.state = .held
        case .finish(let id, let app, let outcome):
            guard let row = rows[id] else {
                found.append((.pushAccountedFor, "\(id) finished (\(outcome)), though it never arrived"))
                break
            }
            if case .done(let before) = row.state {
                found.append((.pushAccountedFor, "\(id) finished twice: \(before), then \(outcome)"))
            }
            if row.push.app != app { found.append((.pushAccountedFor, "\(id) of \(row.push.app) finished for \(app)")) }
            switch outcome {
            case .coalesced(let newer):
                let into = rows[newer]
                if row.state != .held {
                    found.append((.pushHeld, "\(id) coalesced while \(row.state), not held"))
                }
                if into == nil || into?.push.app != app || (into?.order ?? 0) <= row.order {
                    found.append((.pushHeld, "\(id) coalesced into \(newer), which is not a newer push of \(app)"))
                }
            case .handled:
                if handed[id] == nil { found.append((.pushAccountedFor, "\(id) handled, though never handed to the app")) }
            case .cutOff:
                break  // a held push released to its handler stays held in the store until it is handed
            case .shown, .expired, .notDelivered:
                if row.state == .handed { found.append((.pushAccountedFor, "\(id) handed to the app, then \(outcome)")) }
            }
            rows[id]?.state = .done(outcome)
        }
        return found
    }

    /// The remote-notification callback of `run` goes out for `push` (marked handed first); returns what is wrong.
    mutating func hand(_ push: String, run: UInt64) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        if let earlier = handed[push], earlier != run {
            found.append((.pushDeliveredByTheRules, "\(push) handed to the app twice: in run \(earlier), then \(run)"))
        }
        switch rows[push]?.state {
        case nil: found.append((.pushAccountedFor, "\(push) handed to the app, though it never arrived"))
        case .done(let outcome)?:
            if handed[push] != run {
                found.append((.pushDeliveredByTheRules, "\(push) handed to the app after it was finished (\(outcome))"))
            }
        case .accepted?, .held?, .handed?: rows[push]?.state = .handed
        }
        handed[push] = run
        return found
    }

    /// The store after a restart of the daemon: held rows are given back to the core, handed ones are recorded cut
    /// off (their handler is not called again), accepted ones are handed in again; what the shell saw of runs and
    /// wakes is gone with the old core.
    mutating func readBack() -> (held: [RemotePush], handed: [RemotePush], accepted: [RemotePush]) {
        let byOrder = rows.values.sorted { $0.order < $1.order }
        running = [:]
        wakes = [:]
        return (
            byOrder.filter { $0.state == .held }.map(\.push), byOrder.filter { $0.state == .handed }.map(\.push),
            byOrder.filter { $0.state == .accepted }.map(\.push)
        )
    }
}
