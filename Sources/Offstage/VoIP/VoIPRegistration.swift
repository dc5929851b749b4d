import Foundation
import OffstageProtocol
import Synchronization

/// What the app registered for VoIP (SPEC MODE-2): its keep-alive handler and its handed-off socket, kept so that
/// they can be registered again when the app reattaches to a restarted daemon (which has forgotten both).
final class VoIPRegistration: Sendable {
    static let shared = VoIPRegistration()

    private struct State {
        var keepAlive: (seconds: Double, handler: @MainActor @Sendable () -> Void)?
        /// A duplicate of the app's socket, so that it can be handed off again even if the app closed its own.
        var socket: (fd: Int32, handler: @MainActor @Sendable (VoIPSocketEvent) -> Void)?
    }

    private let state = Mutex(State())

    /// Forgets the keep-alive handler and closes the kept socket: a new process of the app starts (the test kit).
    func forgetProcess() {
        let socket = state.withLock { state in
            defer { state = State() }
            return state.socket?.fd
        }
        if let socket { Glibc.close(socket) }
    }

    func setKeepAlive(seconds: Double, handler: @escaping @MainActor @Sendable () -> Void, link: DaemonLink) throws(VoIPError) {
        do {
            _ = try link.request(
                ModesInterface.Method.setKeepAliveTimeout, ModesInterface.SetKeepAliveParameters(seconds: seconds),
                as: EmptyReply.self)
        } catch {
            throw VoIPError(error)
        }
        state.withLock { $0.keepAlive = (seconds, handler) }
    }

    func clearKeepAlive(link: DaemonLink) {
        state.withLock { $0.keepAlive = nil }
        _ = try? link.request(
            ModesInterface.Method.setKeepAliveTimeout, ModesInterface.SetKeepAliveParameters(seconds: nil), as: EmptyReply.self)
    }

    func handOff(
        _ fd: Int32, handler: @escaping @MainActor @Sendable (VoIPSocketEvent) -> Void, link: DaemonLink
    ) throws(VoIPError) {
        try send(fd, link: link)
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        let previous = state.withLock { state -> Int32? in
            defer { state.socket = copy >= 0 ? (copy, handler) : nil }
            return state.socket?.fd
        }
        if let previous { close(previous) }
    }

    private func send(_ fd: Int32, link: DaemonLink) throws(VoIPError) {
        do {
            _ = try link.handOff(
                fd: fd, ModesInterface.Method.handOffSocket, NoParameters(), as: ModesInterface.HandOffReply.self)
        } catch {
            throw VoIPError(error)
        }
    }

    func keepAliveHandler() -> (@MainActor @Sendable () -> Void)? { state.withLock { $0.keepAlive?.handler } }

    func socketHandler() -> (@MainActor @Sendable (VoIPSocketEvent) -> Void)? { state.withLock { $0.socket?.handler } }

    /// The app attached again (the daemon restarted): what it had registered is registered again.
    func reattached(link: DaemonLink) {
        let (keepAlive, socket) = state.withLock { ($0.keepAlive, $0.socket) }
        if let keepAlive {
            do {
                try setKeepAlive(seconds: keepAlive.seconds, handler: keepAlive.handler, link: link)
            } catch {
                reportToDeveloper("the keep-alive handler could not be registered again: \(error)")
            }
        }
        if let socket {
            do {
                try send(socket.fd, link: link)
            } catch {
                reportToDeveloper("the VoIP socket could not be handed off again: \(error)")
            }
        }
    }
}
