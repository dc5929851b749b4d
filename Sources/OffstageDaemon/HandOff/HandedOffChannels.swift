import Foundation
import Logging
import NIOCore
import OffstageCore
import OffstageHost
import OffstageProtocol
import Synchronization

/// The channels apps hand the daemon to watch while they are suspended: a VoIP app's signalling socket (SPEC MODE-2)
/// and an accessory app's open session (MODE-4). It receives them on the hand-off socket (``SocketHandOffServer``),
/// watches each while its app is frozen (``SocketWatcher``) and turns what it sees into core inputs. The core decides
/// when a channel is watched and when it is closed; this carries it out, and never reads a channel.
final class HandedOffChannels: Sendable {
    private struct State {
        /// Received descriptors waiting for the core's first `watchSocket` for their token.
        var pending: [UInt64: Int32] = [:]
        /// The app of each watched channel.
        var apps: [UInt64: AppID] = [:]
        var nextToken: UInt64 = 1
    }

    private let state = Mutex(State())
    private let watcher: SocketWatcher
    private let server: SocketHandOffServer
    private let logger: Logger

    /// Starts the watcher and the hand-off server at `path`. Hand-offs and events go to `engine` on its loop.
    init(path: String, settings: SocketHandOffSettings = .default, engine: DaemonEngine) throws {
        let loop = engine.eventLoop
        logger = engine.logger
        let watcher = try SocketWatcher(settings: settings) { token, event in
            loop.execute { engine.handedOffChannelEvent(token: token, closed: event == .closed) }
        }
        self.watcher = watcher
        server = SocketHandOffServer(socketPath: path, settings: settings) { peer, fd, method, parameters in
            guard let fd else {
                return .failure(HandOffChecks.invalid("no descriptor came with the call", fix: "attach it (SCM_RIGHTS)"))
            }
            // The core decides on the daemon's loop; this thread waits for the answer (the server serves one call at
            // a time), so the descriptor is the loop's only once the core accepted it.
            let decide: @Sendable () -> Result<JSONValue, VarlinkError>
            do throws(VarlinkError) {
                switch try ModesInterface.HandOffCall(method: method, parameters: parameters) {
                case .socket:
                    let socket = try HandOffChecks.socket(fd)
                    decide = { engine.socketHandedOff(socket, by: peer.pid) }
                case .accessorySession(let name):
                    let kind = try HandOffChecks.accessorySession(fd)
                    decide = { engine.accessorySessionHandedOff(fd, name: name, kind: kind, by: peer.pid) }
                }
            } catch {
                return .failure(error)
            }
            do {
                return try loop.submit(decide).wait()
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
            logger.warning(
                "cannot watch a VoIP socket", metadata: ["offstage.token": "\(token)", "offstage.error": "\(error)"])
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
}

extension DaemonEngine {
    /// An app handed off a socket (on the loop, for the hand-off server's thread): the core decides.
    func socketHandedOff(_ socket: HandedOffSocket, by pid: Int32) -> Result<JSONValue, VarlinkError> {
        handedOff(socket.fd, by: pid) { id, appPid, token throws(CoreError) in
            try core.socketHandedOff(id, pid: appPid, token: token, at: now)
        }.map { id in
            logger.info("VoIP socket handed off", metadata: ["offstage.app": "\(id)", "offstage.socket": "\(socket)"])
            return ["kind": .string(socket.kind.rawValue), "domain": .string(socket.domainName)]
        }
    }

    /// An app handed off a session to its accessory `name` (on the loop, for the hand-off server's thread).
    func accessorySessionHandedOff(_ fd: Int32, name: String, kind: String, by pid: Int32) -> Result<
        JSONValue, VarlinkError
    > {
        handedOff(fd, by: pid) { id, appPid, token throws(CoreError) in
            try core.accessorySessionHandedOff(id, pid: appPid, name: name, token: token, at: now)
        }.map { id in
            logger.info(
                "accessory session handed off", metadata: ["offstage.app": "\(id)", "offstage.accessory": "\(name)"])
            return ["kind": .string(kind)]
        }
    }

    /// Gives the descriptor a token and lets the core decide; on a refusal the token is forgotten (the server closes
    /// the descriptor).
    private func handedOff(
        _ fd: Int32, by pid: Int32, _ decide: (AppID, Int32, UInt64) throws(CoreError) -> [CoreAction]
    ) -> Result<AppID, VarlinkError> {
        guard let handOffs else { return .failure(.internalError(reason: "hand-offs are not served")) }
        guard case .app(let id, let appPid) = resolve(pid: pid) else {
            return .failure(notAnApp(pid, in: ModesInterface.name))
        }
        let token = handOffs.accept(fd, of: id)
        do {
            apply(try modesCall { () throws(CoreError) in try decide(id, appPid, token) })
            return .success(id)
        } catch {
            handOffs.refused(token)
            return .failure(error)
        }
    }

    /// The watcher saw data or a hang-up on the channel `token`.
    func handedOffChannelEvent(token: UInt64, closed: Bool) {
        guard let id = handOffs?.app(of: token) else { return }
        apply(core.socketEvent(id, token: token, closed: closed, at: now))
    }
}
