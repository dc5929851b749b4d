import Synchronization

/// NetworkManager's `Metered` property (SPEC SET-1): whether the connection the machine uses now is metered, as the
/// user set it or NetworkManager guessed it (a phone's hotspot announces itself in its Wi-Fi beacon). Read from the
/// system bus, where NetworkManager runs: once when connecting, then from its `PropertiesChanged` signals, and again
/// whenever NetworkManager appears on the bus (`NameOwnerChanged`); while it is not on the bus there is no value, and
/// the interface heuristics (``NetworkReader``) decide alone.
///
/// `onChange` runs on the connection's reader thread whenever the value changes, so the machine is read again.
final class NetworkManagerMetered: Sendable {
    /// `NMMetered`, as NetworkManager's D-Bus API gives it.
    enum Value: UInt32, Sendable, Hashable, CustomStringConvertible {
        case unknown = 0
        case yes = 1
        case no = 2
        case guessYes = 3
        case guessNo = 4

        /// Metered or not; nil when NetworkManager cannot tell.
        var metered: Bool? {
            switch self {
            case .yes, .guessYes: true
            case .no, .guessNo: false
            case .unknown: nil
            }
        }

        var description: String {
            switch self {
            case .unknown: "unknown"
            case .yes: "yes"
            case .no: "no"
            case .guessYes: "guess-yes"
            case .guessNo: "guess-no"
            }
        }
    }

    static let service = "org.freedesktop.NetworkManager"
    static let objectPath = "/org/freedesktop/NetworkManager"
    static let properties = "org.freedesktop.DBus.Properties"
    /// Where the system bus is when `DBUS_SYSTEM_BUS_ADDRESS` does not say.
    static let defaultSystemBus = "unix:path=/run/dbus/system_bus_socket"

    /// What the reader thread and the callers share.
    private final class Shared: Sendable {
        let value = Mutex<Value?>(nil)
        let onChange: @Sendable () -> Void

        init(onChange: @escaping @Sendable () -> Void) { self.onChange = onChange }

        func set(_ new: Value?) {
            let changed = value.withLock { value in
                defer { value = new }
                return value != new
            }
            if changed { onChange() }
        }
    }

    private let connection: DBusConnection
    private let shared: Shared

    /// NetworkManager's value now; nil while it is not on the bus.
    var value: Value? { shared.value.withLock { $0 } }

    /// Connects to the system bus at `address`, subscribes to NetworkManager's changes and reads the value once.
    /// - Throws: when the bus cannot be reached (NetworkManager missing is no error: the value is then nil).
    init(address: String, timeout: Duration = .seconds(2), onChange: @escaping @Sendable () -> Void) throws(DesktopNotificationsError) {
        let shared = Shared(onChange: onChange)
        self.shared = shared
        let connection = Mutex<DBusConnection?>(nil)
        let made = try DBusConnection(
            address: address, timeout: timeout,
            onMessage: { message in
                guard let link = connection.withLock({ $0 }) else { return }
                Self.handle(message, shared, link)
            },
            onEnd: { _ in shared.set(nil) })
        connection.withLock { $0 = made }
        self.connection = made
        do throws(DesktopNotificationsError) {
            let rules = [
                "type='signal',sender='\(Self.service)',path='\(Self.objectPath)',interface='\(Self.properties)',"
                    + "member='PropertiesChanged',arg0='\(Self.service)'",
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',"
                    + "arg0='\(Self.service)'",
            ]
            for rule in rules {
                _ = try made.call(
                    DBusMessage.methodCall(
                        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "AddMatch", body: [.string(rule)]),
                    timeout: timeout)
            }
            // After the subscriptions, so a change between the two is not missed.
            shared.set(try Self.get(made, timeout: timeout))
        } catch {
            made.close()
            throw error
        }
    }

    deinit {
        connection.close()
    }

    /// Closes the connection.
    func stop() { connection.close() }

    /// `Get("org.freedesktop.NetworkManager", "Metered")`, waiting for the answer; nil when NetworkManager is not on
    /// the bus or gives no number.
    private static func get(_ connection: DBusConnection, timeout: Duration) throws(DesktopNotificationsError) -> Value? {
        do {
            return value(ofGetReply: try connection.call(getCall, timeout: timeout))
        } catch .errorReply {
            return nil
        }
    }

    private static var getCall: DBusMessage {
        DBusMessage.methodCall(
            destination: service, path: objectPath, interface: properties, member: "Get",
            body: [.string(service), .string("Metered")], flags: .noAutoStart)
    }

    static func value(ofGetReply reply: DBusMessage) -> Value? {
        guard reply.body.count == 1, case .variant(.uint32(let number)) = reply.body[0] else { return nil }
        return Value(rawValue: number) ?? .unknown
    }

    /// A signal: the property changed (or was invalidated, then read again), or NetworkManager came or went.
    private static func handle(_ message: DBusMessage, _ shared: Shared, _ connection: DBusConnection) {
        func readAgain() {
            // Not waited for here: this is the thread that delivers the answer.
            _ = try? connection.send(getCall) { result in
                switch result {
                case .success(let reply): shared.set(value(ofGetReply: reply))
                case .failure: shared.set(nil)
                }
            }
        }
        switch message.member {
        case "PropertiesChanged":
            guard message.body.count == 3, message.body[0].text == service else { return }
            if case .array(_, let entries) = message.body[1] {
                for case .dictEntry(.string("Metered"), .variant(.uint32(let number))) in entries {
                    shared.set(Value(rawValue: number) ?? .unknown)
                    return
                }
            }
            if case .array(_, let invalidated) = message.body[2], invalidated.contains(.string("Metered")) { readAgain() }
        case "NameOwnerChanged":
            guard message.body.count == 3, message.body[0].text == service, let owner = message.body[2].text else { return }
            if owner.isEmpty { shared.set(nil) } else { readAgain() }
        default:
            break
        }
    }
}
