import Glibc
import OffstageProtocol
import Synchronization

/// What the app's process registered and handed off for its accessories (SPEC MODE-4), kept so that a restarted daemon
/// gets the sessions back: it keeps registrations in its store but the descriptors it held died with it.
///
/// Registrations are kept too, for a daemon that lost them (a fresh state folder): a hand-off it refuses for an
/// unknown accessory registers the accessory again first.
final class AccessoryRegistry: Sendable {
    static let shared = AccessoryRegistry()

    private struct Session {
        /// A duplicate of the session's descriptor, owned here.
        var fd: Int32
        /// The ``AccessorySession`` it belongs to: its `ObjectIdentifier`'s bit pattern.
        ///
        /// Not an `ObjectIdentifier`: in a debug build, Swift 6.3 reads `sessions[name]?.fd` of a struct of an `Int32`
        /// and an `ObjectIdentifier` as present when it is absent, with whatever the stack held as the descriptor
        /// (its nil test takes the padding after the `Int32` for part of the value), so a hand-off closed a random
        /// descriptor of the app's — in a test, the SDK's own connection to the daemon.
        var owner: UInt

        init(fd: Int32, owner: ObjectIdentifier) {
            self.fd = fd
            self.owner = UInt(bitPattern: owner)
        }
    }

    private struct State {
        var registrations: [String: ModesInterface.RegisterAccessoryParameters] = [:]
        var sessions: [String: Session] = [:]
    }

    private let state = Mutex(State())

    /// Forgets registrations and closes the kept sessions: a new process of the app starts (the test kit).
    func forgetProcess() {
        let sessions = state.withLock { state in
            defer { state = State() }
            return state.sessions.values.map(\.fd)
        }
        for fd in sessions { Glibc.close(fd) }
    }

    // MARK: Registrations

    func register(
        _ parameters: ModesInterface.RegisterAccessoryParameters, link: DaemonLink
    ) throws(AccessoryError) -> Accessory {
        let reply: ModesInterface.RegisterAccessoryReply
        do {
            reply = try link.request(
                ModesInterface.Method.registerAccessory, parameters, as: ModesInterface.RegisterAccessoryReply.self)
        } catch {
            throw AccessoryError(error)
        }
        state.withLock { $0.registrations[parameters.name] = parameters }
        return Accessory(reply.accessory)
    }

    func unregister(_ name: String, link: DaemonLink) throws(AccessoryError) {
        do {
            _ = try link.request(
                ModesInterface.Method.unregisterAccessory, ModesInterface.AccessoryNameParameters(name: name),
                as: EmptyReply.self)
        } catch {
            throw AccessoryError(error)
        }
        // The daemon closed its copy of the session; the one kept here has nothing left to do.
        let session = state.withLock { state in
            state.registrations[name] = nil
            return state.sessions.removeValue(forKey: name)
        }
        if let session { Glibc.close(session.fd) }
    }

    func accessories(link: DaemonLink) throws(AccessoryError) -> [Accessory] {
        do {
            return try link.request(
                ModesInterface.Method.accessories, NoParameters(), as: ModesInterface.AccessoriesReply.self
            )
            .accessories.map(Accessory.init)
        } catch {
            throw AccessoryError(error)
        }
    }

    // MARK: Sessions

    /// Hands `fd`, a duplicate the registry now owns, to the daemon as the session of `name`; it replaces the
    /// accessory's previous session. On failure `fd` is closed.
    func handOff(_ fd: Int32, name: String, session owner: ObjectIdentifier, link: DaemonLink) throws(AccessoryError) {
        do {
            try send(fd, name: name, link: link)
        } catch {
            Glibc.close(fd)
            throw error
        }
        let previous = state.withLock { state in
            defer { state.sessions[name] = Session(fd: fd, owner: owner) }
            return state.sessions[name]?.fd
        }
        if let previous { Glibc.close(previous) }
    }

    private func send(_ fd: Int32, name: String, link: DaemonLink) throws(AccessoryError) {
        do {
            _ = try link.handOff(
                fd: fd, ModesInterface.Method.handOffAccessorySession, ModesInterface.AccessoryNameParameters(name: name),
                as: ModesInterface.HandOffAccessorySessionReply.self)
        } catch {
            throw AccessoryError(error)
        }
    }

    /// The app closed a session: it is not handed off again.
    func sessionClosed(_ owner: ObjectIdentifier) {
        let closed = state.withLock { state in
            let names = state.sessions.filter { $0.value.owner == UInt(bitPattern: owner) }.map(\.key)
            return names.compactMap { state.sessions.removeValue(forKey: $0)?.fd }
        }
        for fd in closed { Glibc.close(fd) }
    }

    /// The accessory disconnected: the daemon closed its copy of the session, so there is nothing to hand off again.
    func disconnected(_ name: String) {
        if let session = state.withLock({ $0.sessions.removeValue(forKey: name) }) { Glibc.close(session.fd) }
    }

    /// Whether a session of `name` is kept for a new hand-off.
    func hasSession(_ name: String) -> Bool { state.withLock { $0.sessions[name] != nil } }

    /// The app attached again (the daemon restarted): every open session is handed off again.
    func reattached(link: DaemonLink) {
        // Duplicates taken under the lock: the app may close a session meanwhile, and its number be reused.
        let (duplicates, registrations) = state.withLock { state in
            (state.sessions.mapValues { session -> (fd: Int32, errno: Int32) in
                let copy = fcntl(session.fd, F_DUPFD_CLOEXEC, 0)
                return (copy, copy >= 0 ? 0 : errno)
            }, state.registrations)
        }
        // A session that cannot be duplicated is not handed off again: said, not skipped in silence.
        for (name, failed) in duplicates where failed.fd < 0 {
            reportToDeveloper(
                "the session of accessory '\(name)' could not be handed off again: duplicating its descriptor failed ("
                    + String(cString: strerror(failed.errno)) + ")")
        }
        let sessions = duplicates.filter { $0.value.fd >= 0 }.mapValues(\.fd)
        defer { for fd in sessions.values { Glibc.close(fd) } }
        for (name, fd) in sessions.sorted(by: { $0.key < $1.key }) {
            do {
                try send(fd, name: name, link: link)
            } catch let error where error.code == .invalidArgument && registrations[name] != nil {
                // The daemon does not know the accessory any more: registered again, then handed off.
                do {
                    _ = try register(registrations[name]!, link: link)
                    try send(fd, name: name, link: link)
                } catch {
                    reportToDeveloper("the session of accessory '\(name)' could not be handed off again: \(error)")
                }
            } catch {
                reportToDeveloper("the session of accessory '\(name)' could not be handed off again: \(error)")
            }
        }
    }
}
