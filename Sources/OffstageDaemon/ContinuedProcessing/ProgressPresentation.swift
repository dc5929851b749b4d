import OffstageCore

/// What the daemon knows of the progress notifications it keeps on the desktop, one per running continued-processing
/// task (SPEC SCH-11): each task's notification is updated in place (`replaces_id`) as progress comes, carries a
/// Cancel button, and is taken off when the task ends.
///
/// Bookkeeping only, like ``DesktopPresentation``: the engine talks to the desktop
/// (`DaemonEngine+ProgressDesktop.swift`). One `Notify` is in flight per task at a time: an update that comes while
/// one is unanswered waits, and only the latest is sent once the desktop has answered with its id.
struct ProgressPresentation {
    /// One task's notification.
    struct Item: Hashable, Sendable {
        var app: AppID
        var identifier: String
        /// The desktop's id, once it answered.
        var desktopID: UInt32?
        /// A `Notify` not yet answered.
        var inFlight: UInt64?
        /// The latest content, not yet sent because a `Notify` is in flight.
        var waiting: NotificationDesktopContent?
        /// The task ended while a `Notify` was in flight: withdraw what it shows once answered.
        var ended = false
    }

    /// What to send.
    struct Send: Hashable, Sendable {
        var token: UInt64
        var content: NotificationDesktopContent
    }

    /// The key a progress notification carries (hint `x-offstage-task`).
    static func key(_ app: AppID, _ identifier: String) -> String { "\(app)/\(identifier)" }

    /// The Cancel button's action key.
    static let cancelAction = "cancel"

    private(set) var items: [UInt64: Item] = [:]
    private var runsByToken: [UInt64: UInt64] = [:]
    private var runsByDesktopID: [UInt32: UInt64] = [:]
    /// Tokens of their own, far from the notifications' (which count up from 1), so each answer finds its owner.
    private var nextToken: UInt64 = 1 << 62

    init() {}

    /// The run's task now looks like `view`: what to send, if anything (nothing while a `Notify` is in flight).
    mutating func update(_ app: AppID, run: UInt64, _ view: ContinuedTaskView) -> Send? {
        var item = items[run] ?? Item(app: app, identifier: view.identifier)
        var content = Self.content(app, view)
        content.replacesID = item.desktopID ?? 0
        guard item.inFlight == nil else {
            item.waiting = content
            items[run] = item
            return nil
        }
        let token = take()
        item.inFlight = token
        items[run] = item
        runsByToken[token] = run
        return Send(token: token, content: content)
    }

    /// The run's task is over: the desktop id to withdraw, if its notification is on the desktop now.
    mutating func ended(run: UInt64) -> UInt32? {
        guard var item = items[run] else { return nil }
        if item.inFlight != nil {
            item.ended = true
            item.waiting = nil
            items[run] = item
            return nil
        }
        items[run] = nil
        if let id = item.desktopID { runsByDesktopID[id] = nil }
        return item.desktopID
    }

    /// Whether `token` is one of ours.
    func owns(token: UInt64) -> Bool { runsByToken[token] != nil }

    /// The desktop showed the `Notify` of `token` as `desktopID`: what to do next — withdraw it (the task ended
    /// meanwhile) or send the update that waited.
    mutating func shown(token: UInt64, desktopID: UInt32) -> (withdraw: UInt32?, send: Send?) {
        guard let run = runsByToken.removeValue(forKey: token), var item = items[run] else { return (nil, nil) }
        item.inFlight = nil
        if item.ended {
            items[run] = nil
            return (desktopID, nil)
        }
        item.desktopID = desktopID
        runsByDesktopID[desktopID] = run
        var send: Send?
        if var waiting = item.waiting {
            waiting.replacesID = desktopID
            let next = take()
            item.inFlight = next
            item.waiting = nil
            runsByToken[next] = run
            send = Send(token: next, content: waiting)
        }
        items[run] = item
        return (nil, send)
    }

    /// The desktop refused the `Notify` of `token`: the task is not shown (later updates try again).
    mutating func failed(token: UInt64) {
        guard let run = runsByToken.removeValue(forKey: token), var item = items[run] else { return }
        item.inFlight = nil
        if item.ended {
            items[run] = nil
        } else {
            items[run] = item
        }
    }

    /// The task whose notification has `desktopID`.
    func task(forDesktopID desktopID: UInt32) -> (app: AppID, identifier: String)? {
        runsByDesktopID[desktopID].flatMap { items[$0] }.map { ($0.app, $0.identifier) }
    }

    /// The notification `desktopID` left the desktop (the user dismissed it): later updates show a new one.
    mutating func closed(desktopID: UInt32) -> Bool {
        guard let run = runsByDesktopID.removeValue(forKey: desktopID) else { return false }
        items[run]?.desktopID = nil
        return true
    }

    /// The desktop is gone: nothing is on it any more.
    mutating func disconnected() {
        items.removeAll()
        runsByToken.removeAll()
        runsByDesktopID.removeAll()
    }

    private mutating func take() -> UInt64 {
        defer { nextToken += 1 }
        return nextToken
    }

    /// The notification of a task: its title, its subtitle and progress (or why it is ending), a progress bar, Open
    /// and Cancel, never expiring while the task runs.
    static func content(_ app: AppID, _ view: ContinuedTaskView) -> NotificationDesktopContent {
        let status = view.state == .ending ? "ending: \(view.endedBecause ?? "its time is over")"
            : ContinuedProgress.description(completed: view.completed, total: view.total)
        let body = view.subtitle.isEmpty ? status : "\(view.subtitle)\n\(status)"
        var actions = [NotificationDesktopContent.Action(identifier: "default", label: "Open")]
        if view.state == .running { actions.append(.init(identifier: cancelAction, label: "Cancel")) }
        return NotificationDesktopContent(
            appName: app.rawValue, summary: view.title, body: body, actions: actions, sound: nil,
            key: key(app, view.identifier), threadIdentifier: "", expireTimeout: 0,
            progress: Int((ContinuedProgress.fraction(completed: view.completed, total: view.total) * 100).rounded(.down)))
    }
}
