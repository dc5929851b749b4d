import Synchronization

/// What the desktop told us.
public enum DesktopNotificationEvent: Sendable, Hashable {
    /// The reply to `Notify`: the server's id for the notification sent with `token`.
    case shown(token: UInt64, id: UInt32)
    /// `Notify` got an error reply ("org.freedesktop.DBus.Error.ServiceUnknown: …" when no notification daemon
    /// runs), or the connection ended before the reply.
    case failed(token: UInt64, message: String)
    /// The signal `ActionInvoked(u id, s action_key)`: the user picked an action; "default" is a click on the body.
    case actionInvoked(id: UInt32, action: String)
    /// The signal `NotificationClosed(u id, u reason)`: 1 expired, 2 dismissed by the user, 3 closed by a call to
    /// `CloseNotification`, 4 undefined.
    case closed(id: UInt32, reason: UInt32)
    /// The bus connection ended (not sent after `close()`): the text says why.
    case disconnected(String)
}

/// The desktop's notification service, `org.freedesktop.Notifications` on the session bus (SPEC NT-2): shows
/// notifications and reports what the user did with them.
///
/// ## Threading
/// `events` runs on the connection's own reader thread, one event at a time, in the order the bus sent them; it
/// must return promptly (hand the event to the daemon's loop) and must not call `serverInformation(timeout:)`, which
/// would wait for that very thread. `notify` and `close(id:)` may be called from any thread, also from `events`.
///
/// ## When the server or the bus goes away
/// Every `notify` gets exactly one `.shown` or `.failed`. Without a notification server the bus answers with
/// `.failed` naming `org.freedesktop.DBus.Error.ServiceUnknown` at once. When the bus connection ends, the `Notify`
/// calls still unanswered get `.failed`, then `.disconnected` comes, and later calls throw `.disconnected`: create a
/// new `DesktopNotifications` to reconnect. Ids are the server's: a restarted server reuses them.
public final class DesktopNotifications: Sendable {
    static let service = "org.freedesktop.Notifications"
    static let objectPath = "/org/freedesktop/Notifications"

    private let connection: DBusConnection
    private let events: @Sendable (DesktopNotificationEvent) -> Void

    /// Connects to the bus at `address` (the value of DBUS_SESSION_BUS_ADDRESS), subscribes to the two signals of
    /// org.freedesktop.Notifications, and calls `events` on its own reader thread for every event.
    ///
    /// - Parameter timeout: for each step of connecting (authentication, `Hello`, `AddMatch`), and for each write.
    /// - Throws: `DesktopNotificationsError`: `.noSessionBus` when nothing listens at the address (or it is empty),
    ///   `.authenticationRefused`, `.timedOut` when the bus does not answer.
    public init(
        address: String, timeout: Duration = .seconds(5),
        events: @escaping @Sendable (DesktopNotificationEvent) -> Void
    ) throws(DesktopNotificationsError) {
        self.events = events
        // An end during the setup is thrown by init, not sent: a caller gets one or the other.
        let setup = Mutex(SetupState.connecting)
        connection = try DBusConnection(
            address: address, timeout: timeout,
            onMessage: { message in
                if let event = Self.event(from: message) { events(event) }
            },
            onEnd: { reason in
                let live = setup.withLock { state in
                    if case .live = state { return true }
                    state = .ended(reason)
                    return false
                }
                if live { events(.disconnected(reason)) }
            })
        do throws(DesktopNotificationsError) {
            for member in ["ActionInvoked", "NotificationClosed"] {
                let rule =
                    "type='signal',sender='\(Self.service)',interface='\(Self.service)',member='\(member)',"
                    + "path='\(Self.objectPath)'"
                let addMatch = DBusMessage.methodCall(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "AddMatch", body: [.string(rule)])
                _ = try connection.call(addMatch, timeout: timeout)
            }
            try setup.withLock { state throws(DesktopNotificationsError) in
                if case .ended(let reason) = state { throw .disconnected(reason) }
                state = .live
            }
        } catch {
            connection.close()
            throw error
        }
    }

    deinit {
        connection.close()
    }

    /// Sends Notify(app_name s, replaces_id u, app_icon s, summary s, body s, actions as, hints a{sv},
    /// expire_timeout i) without waiting for the reply; the reply arrives as `.shown` or `.failed` with `token`.
    /// Never blocks on the server (a write to a bus that takes no data gives up after the connection's timeout).
    ///
    /// - Throws: `.disconnected` when the connection has ended (then no event comes for `token`),
    ///   `.unsupportedValue` when a text holds a NUL byte.
    public func notify(token: UInt64, _ notification: DesktopNotification) throws(DesktopNotificationsError) {
        let call = Self.call("Notify", notification.notifyArguments)
        // The handler holds `events`, not `self`: an unanswered call must not keep this object alive.
        let events = self.events
        try connection.send(call) { result in
            switch result {
            case .success(let reply):
                guard reply.body.count == 1, case .uint32(let id) = reply.body[0] else {
                    let error = DesktopNotificationsError.unexpectedReply(method: "Notify", signature: reply.signature)
                    return events(.failed(token: token, message: error.description))
                }
                events(.shown(token: token, id: id))
            case .failure(.errorReply(let name, let message)):
                events(.failed(token: token, message: "\(name): \(message)"))
            case .failure(let error):
                events(.failed(token: token, message: error.description))
            }
        }
    }

    /// CloseNotification(u id), fire-and-forget: the server answers with `.closed(id:reason: 3)` if it knew the id.
    public func close(id: UInt32) throws(DesktopNotificationsError) {
        var call = Self.call("CloseNotification", [.uint32(id)])
        call.flags = .noReplyExpected
        try connection.send(call)
    }

    /// GetServerInformation, blocking with a timeout (for probing and tests): (name, vendor, version, spec_version).
    ///
    /// - Throws: `.errorReply` (ServiceUnknown when no server runs), `.timedOut`, `.disconnected`,
    ///   `.unexpectedReply`, and `.calledOnEventsThread` when called from `events`.
    public func serverInformation(timeout: Duration) throws(DesktopNotificationsError) -> (
        name: String, vendor: String, version: String, specVersion: String
    ) {
        let reply = try connection.call(Self.call("GetServerInformation", []), timeout: timeout)
        let texts = reply.body.compactMap { value -> String? in
            if case .string(let text) = value { text } else { nil }
        }
        guard reply.body.count == 4, texts.count == 4 else {
            throw .unexpectedReply(method: "GetServerInformation", signature: reply.signature)
        }
        return (texts[0], texts[1], texts[2], texts[3])
    }

    /// GetCapabilities, blocking with a timeout (for probing and tests): what the server supports ("actions",
    /// "body-markup", "sound", …).
    ///
    /// - Throws: as ``serverInformation(timeout:)``.
    public func capabilities(timeout: Duration) throws(DesktopNotificationsError) -> [String] {
        let reply = try connection.call(Self.call("GetCapabilities", []), timeout: timeout)
        guard reply.body.count == 1, case .array(.string, let values) = reply.body[0] else {
            throw .unexpectedReply(method: "GetCapabilities", signature: reply.signature)
        }
        return values.compactMap(\.text)
    }

    /// Closes the connection and joins the reader thread. Idempotent. Unanswered `Notify` calls get `.failed`
    /// before it returns; no `.disconnected` follows.
    public func close() {
        connection.close()
    }

    // MARK: - Internals

    /// Whether `init` has returned, or the connection ended before it could.
    private enum SetupState {
        case connecting
        case ended(String)
        case live
    }

    private static func call(_ member: String, _ body: [DBusValue]) -> DBusMessage {
        .methodCall(destination: service, path: objectPath, interface: service, member: member, body: body)
    }

    /// The event a signal of the notification service stands for; nil for any other message.
    static func event(from message: DBusMessage) -> DesktopNotificationEvent? {
        guard message.kind == .signal, message.interface == service, message.path == objectPath else { return nil }
        switch (message.member, message.body.first, message.body.count > 1 ? message.body[1] : nil) {
        case ("ActionInvoked", .uint32(let id)?, .string(let action)?) where message.body.count == 2:
            return .actionInvoked(id: id, action: action)
        case ("NotificationClosed", .uint32(let id)?, .uint32(let reason)?) where message.body.count == 2:
            return .closed(id: id, reason: reason)
        default:
            return nil
        }
    }
}
