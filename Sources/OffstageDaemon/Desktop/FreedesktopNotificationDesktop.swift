/// The daemon's desktop (SPEC NT-2) on the freedesktop notification service: each ``NotificationDesktopContent`` as a
/// `Notify` call, and the service's replies and signals as ``NotificationDesktopEvent``s, one for one.
public final class FreedesktopNotificationDesktop: NotificationDesktop {
    /// What `offstaged` gives `OffstageDaemonService`: connects to the session bus at the address.
    public static let connector: NotificationDesktopConnector = { address, events in
        try FreedesktopNotificationDesktop(address: address, events: events)
    }

    /// `NotificationClosed`'s reason when the user dismissed the notification.
    static let dismissedByUser: UInt32 = 2

    private let client: DesktopNotifications
    /// Whether bodies are sent with `&`, `<` and `>` as entities: the service reads markup in them ("body-markup"), or
    /// none answered at connection (most do). One without markup shows the text as it is, entities included.
    private let escapesBody: Bool
    /// The notification service that answered at connection, or why none did: for the daemon's log.
    public let description: String

    /// Connects to the bus at `address` and asks which notification service runs there (a bus without one is kept:
    /// a notification daemon started later, or activated by the first `Notify`, is used then).
    public init(
        address: String, timeout: Duration = .seconds(5),
        events: @escaping @Sendable (NotificationDesktopEvent) -> Void
    ) throws(DesktopNotificationsError) {
        client = try DesktopNotifications(address: address, timeout: timeout) { events(Self.event($0)) }
        escapesBody = (try? client.capabilities(timeout: timeout))?.contains("body-markup") ?? true
        do {
            let server = try client.serverInformation(timeout: timeout)
            description = "\(server.name) \(server.version) (\(server.vendor)) on the session bus \(address)"
        } catch {
            description = "the session bus \(address), where no notification service answers yet: \(error)"
        }
    }

    /// Sends `Notify`; the reply comes as `.shown` or `.failed` with `token`.
    public func show(_ content: NotificationDesktopContent, token: UInt64) throws {
        try client.notify(token: token, Self.notification(content, escapingBody: escapesBody))
    }

    /// Sends `CloseNotification`; the service answers with `NotificationClosed`, which is not the user's.
    public func withdraw(desktopID: UInt32) throws {
        try client.close(id: desktopID)
    }

    /// The `Notify` call for `content`; with `escapingBody`, for a server that would read `<b>` or `&amp;` in an app's
    /// text as markup. No `category` or `desktop-entry` hint: an app's category is its own name for a set of actions,
    /// not one of the specification's categories, and apps have no desktop entry.
    static func notification(_ content: NotificationDesktopContent, escapingBody: Bool) -> DesktopNotification {
        var hints: [String: DesktopHint] = [:]
        if let progress = content.progress {
            hints["x-offstage-task"] = .string(content.key)
            hints["value"] = .int32(Int32(clamping: min(100, max(0, progress))))
        } else {
            hints["x-offstage-key"] = .string(content.key)
        }
        if !content.threadIdentifier.isEmpty { hints["x-offstage-thread"] = .string(content.threadIdentifier) }
        switch content.sound {
        case .themeName(let name): hints["sound-name"] = .string(name)
        case .file(let path): hints["sound-file"] = .string(path)
        case nil: break
        }
        return DesktopNotification(
            appName: content.appName, replacesID: content.replacesID, summary: content.summary,
            body: escapingBody ? escapingMarkup(content.body) : content.body,
            actions: content.actions.map { DesktopNotificationAction(key: $0.identifier, label: $0.label) },
            hints: hints, expireTimeout: content.expireTimeout)
    }

    /// `text` with `&`, `<` and `>` as entities, so a server that reads markup shows it as written. By scalar, not by
    /// character: a `<` followed by a combining mark is one character but still opens a tag for a markup parser.
    static func escapingMarkup(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped.append(contentsOf: "&amp;".unicodeScalars)
            case "<": escaped.append(contentsOf: "&lt;".unicodeScalars)
            case ">": escaped.append(contentsOf: "&gt;".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// What the service reported, as the daemon's event.
    static func event(_ event: DesktopNotificationEvent) -> NotificationDesktopEvent {
        switch event {
        case .shown(let token, let id): .shown(token: token, desktopID: id)
        case .failed(let token, let message): .failed(token: token, message: message)
        case .actionInvoked(let id, let action): .clicked(desktopID: id, action: action)
        case .closed(let id, let reason): .closed(desktopID: id, byUser: reason == dismissedByUser)
        case .disconnected(let reason): .disconnected(reason: reason)
        }
    }
}
