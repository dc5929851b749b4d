import OffstageCore

/// A socket a simulated VoIP app handed off (SPEC MODE-2).
public struct SimulatedSocket: Hashable, Sendable {
    /// The app it belongs to.
    public var app: AppID
    /// Whether the shell watches it now.
    public var armed: Bool
}

/// What a simulated VoIP app does, through the same core inputs the SDK and the daemon's socket watcher use.
extension Simulation {
    /// The app sets its keep-alive timeout; a refusal is recorded in ``errors``.
    mutating func setKeepAlive(_ seconds: Double, pid: Int32, app id: AppID) {
        do throws(CoreError) {
            perform(try core.setKeepAliveTimeout(id, pid: pid, seconds: seconds, at: now))
        } catch {
            errors.append(error)
        }
    }

    /// The app hands off a socket; a refusal is recorded in ``errors`` (the shell closes the socket).
    mutating func handOffSocket(pid: Int32, app id: AppID) {
        let token = nextSocketToken
        nextSocketToken += 1
        do throws(CoreError) {
            perform(try core.socketHandedOff(id, pid: pid, token: token, at: now))
        } catch {
            errors.append(error)
        }
    }

    /// The app's signalling server sends data on the app's handed-off socket (or, with `closed`, hangs up). Only a
    /// watched socket reports it, as the daemon's watcher does; the app reads it itself when it runs.
    public mutating func socketData(for id: AppID, closed: Bool = false) {
        guard let (token, socket) = sockets.first(where: { $0.value.app == id }), socket.armed else { return }
        // Each watch reports one event (as the daemon's watcher, with epoll's one-shot): watched again only when the
        // core says so.
        sockets[token]?.armed = false
        perform(core.voipSocketEvent(id, token: token, closed: closed, at: now))
    }

    /// The daemon starts: VoIP apps are launched into the background.
    public mutating func boot() { perform(core.launchAtBoot(at: now)) }
}
