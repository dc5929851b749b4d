import Foundation
import Logging
import NIOCore
import OffstageCore
import OffstageProtocol
import Synchronization

/// The daemon's VoIP shell part (SPEC MODE-2): it receives the sockets apps hand off (``SocketHandOffServer``),
/// watches each while its app is suspended (``SocketWatcher``) and turns what it sees into core inputs. The core
/// decides when a socket is watched and when it is closed; this carries it out, and never reads a socket.
final class VoIPSockets: Sendable {
    private struct State {
        /// Received descriptors waiting for the core's first `watchSocket` for their token.
        var pending: [UInt64: Int32] = [:]
        /// The app of each watched socket.
        var apps: [UInt64: AppID] = [:]
        var nextToken: UInt64 = 1
    }

    private let state = Mutex(State())
    private let watcher: SocketWatcher
    private let server: SocketHandOffServer
    private let logger: Logger

    /// Starts the watcher and the hand-off server at `path`. Hand-offs and socket events go to `engine` on its loop.
    init(path: String, settings: SocketHandOffSettings = .default, engine: DaemonEngine) throws {
        let loop = engine.eventLoop
        logger = engine.logger
        let watcher = try SocketWatcher(settings: settings) { token, event in
            loop.execute { engine.voipSocketEvent(token: token, closed: event == .closed) }
        }
        self.watcher = watcher
        server = SocketHandOffServer(socketPath: path, settings: settings) { peer, fd, method, _ in
            guard method == ModesInterface.Method.handOffSocket else { return .failure(.methodNotFound(method)) }
            guard let fd else {
                return .failure(Self.refusal("InvalidArgument", "no socket came with the call", "attach the connected socket (SCM_RIGHTS)"))
            }
            let socket: HandedOffSocket
            do {
                socket = try HandedOffSocketCheck.check(fd)
            } catch {
                return .failure(Self.refusal("InvalidArgument", "\(error)", "hand off the connected socket to your signalling server"))
            }
            // The core decides on the daemon's loop; this thread waits for the answer (the server serves one call at
            // a time), so the descriptor is the loop's only once the core accepted it.
            do {
                return try loop.submit { engine.socketHandedOff(socket, by: peer.pid) }.wait()
            } catch {
                return .failure(.internalError(reason: "\(error)"))
            }
        }
        try server.start()
    }

    /// Stops serving hand-offs and watching; closes every socket.
    func stop() {
        server.stop()
        watcher.stop()
        let pending = state.withLock { state in
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        for fd in pending { Glibc.close(fd) }
    }

    /// A token for a received descriptor of `app`, kept until the core says to watch it.
    func accept(_ fd: Int32, of app: AppID) -> UInt64 {
        state.withLock { state in
            let token = state.nextToken
            state.nextToken += 1
            state.pending[token] = fd
            state.apps[token] = app
            return token
        }
    }

    /// The core refused the descriptor of `token`: forgotten (the server closes it).
    func refused(_ token: UInt64) {
        state.withLock { state in
            state.pending[token] = nil
            state.apps[token] = nil
        }
    }

    /// The app whose socket `token` is.
    func app(of token: UInt64) -> AppID? { state.withLock { $0.apps[token] } }

    /// Watches (armed) or stops watching the socket `token`.
    func watch(_ token: UInt64, armed: Bool) {
        let fd = state.withLock { $0.pending.removeValue(forKey: token) }
        do {
            if let fd {
                try watcher.watch(fd: fd, token: token, armed: armed)
            } else if armed {
                try watcher.arm(token)
            } else {
                try watcher.disarm(token)
            }
        } catch {
            logger.warning("cannot watch a VoIP socket", metadata: ["offstage.token": "\(token)", "offstage.error": "\(error)"])
        }
    }

    /// Closes the socket `token` and forgets it.
    func close(_ token: UInt64) {
        let fd = state.withLock { state -> Int32? in
            state.apps[token] = nil
            return state.pending.removeValue(forKey: token)
        }
        if let fd { Glibc.close(fd) }
        watcher.remove(token)
    }

    static func refusal(_ name: String, _ message: String, _ fix: String) -> VarlinkError {
        VarlinkError("\(ModesInterface.name).\(name)", parameters: ["message": .string(message), "fix": .string(fix)])
    }
}

extension DaemonEngine {
    /// An app handed off a socket (on the loop, for the hand-off server's thread): the core decides.
    func socketHandedOff(_ socket: HandedOffSocket, by pid: Int32) -> Result<JSONValue, VarlinkError> {
        guard let voipSockets else { return .failure(.internalError(reason: "VoIP sockets are not served")) }
        guard case .app(let id, let appPid) = resolve(pid: pid) else { return .failure(notAnApp(pid, in: ModesInterface.name)) }
        let token = voipSockets.accept(socket.fd, of: id)
        do {
            let actions = try modesCall { () throws(CoreError) in
                try core.socketHandedOff(id, pid: appPid, token: token, at: now)
            }
            apply(actions)
            logger.info("VoIP socket handed off", metadata: ["offstage.app": "\(id)", "offstage.socket": "\(socket)"])
            return .success(["kind": .string(socket.kind.rawValue), "domain": .string(socket.domainName)])
        } catch {
            voipSockets.refused(token)
            return .failure(error)
        }
    }

    /// The watcher saw data or a hang-up on socket `token`.
    func voipSocketEvent(token: UInt64, closed: Bool) {
        guard let id = voipSockets?.app(of: token) else { return }
        apply(core.voipSocketEvent(id, token: token, closed: closed, at: now))
    }
}
