import Foundation
import OffstageCore
import OffstageProtocol

/// Who is calling, from the connection itself (decision 0006): never from a message field.
enum CallerIdentity: Hashable {
    /// A process of an installed app; `pid` is the app's main process.
    case app(AppID, pid: Int32)
    /// Not a process of any app: the user (the CLI or another client).
    case user
}

extension DaemonEngine {
    /// The caller of a connection, cached for the connection's life (a peer's pid cannot change). A process that is
    /// not an app may become one by attaching by hand: its cached identities are dropped then (``forgetIdentities``).
    func identify(_ context: VarlinkCallContext) -> CallerIdentity {
        if let known = identities[context.connectionID] { return known.identity }
        let identity = resolve(pid: context.peer.pid)
        identities[context.connectionID] = (context.peer.pid, identity)
        return identity
    }

    /// Drops what the connections of `pid` were identified as (it has just become an app's process).
    func forgetIdentities(of pid: Int32) {
        identities = identities.filter { $0.value.pid != pid }
    }

    func resolve(pid: Int32) -> CallerIdentity {
        if let id = appsByPid[pid] { return .app(id, pid: pid) }
        if let key = control.appKey(owningPid: pid), let id = AppID.validated(key), let process = core.apps[id]?.process,
            let main = process.pid
        {
            return .app(id, pid: main)
        }
        return .user
    }

    /// For a process started by hand (SPEC LC-8): the installed app whose executable it runs, if any.
    func appRunningExecutable(of pid: Int32) -> AppID? {
        guard let path = ProcFS().executablePath(of: pid) else { return nil }
        let executable = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        for (id, entry) in core.apps {
            let installed = URL(fileURLWithPath: entry.app.bundlePath + "/" + entry.app.manifest.executable)
                .resolvingSymlinksInPath().path
            if executable == installed || executable == entry.app.sourceExecutable { return id }
        }
        return nil
    }

    /// A connection closed: forget its identity, its callback stream and its log subscription.
    func connectionClosed(_ context: VarlinkCallContext) {
        eventLoop.preconditionInEventLoop()
        identities[context.connectionID] = nil
        eventLog.followers[context.connectionID] = nil
        if let (id, stream) = streams.first(where: { $0.value.connection == context.connectionID }) {
            streams[id] = nil
            apply(core.detached(id, pid: stream.pid, at: now))
        }
    }
}
