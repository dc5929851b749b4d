import Foundation
import OffstageCore
import OffstageHost
import OffstageProtocol

/// `io.offstage.App`: the calls an app's SDK makes. The app is the one that owns the calling process.
struct AppService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(AppInterface.definition)
    }

    var methods: [String: VarlinkMethodHandler] {
        // Background tasks, callbacks answered and scheduled work (SPEC LC, BT, SCH-1..4) only ask or tell the core
        // (OffstageHost).
        var methods = engine.hostMethods(AppCalls.methods, in: AppInterface.name, answer: AppCalls.answer)
        methods["Attach"] = { context, request, responder in try engine.attach(context, request, responder) }
        return methods
    }
}

extension DaemonEngine {
    /// The calling app, or `NotAnApp` of `interface`.
    func requireApp(_ context: VarlinkCallContext, in interface: String = AppInterface.name) throws(VarlinkError) -> (AppID, Int32) {
        guard case .app(let id, let pid) = identify(context) else {
            throw notAnApp(context.peer.pid, in: interface)
        }
        return (id, pid)
    }

    func notAnApp(_ pid: Int32, in interface: String = AppInterface.name) -> VarlinkError {
        VarlinkError(
            "\(interface).NotAnApp",
            parameters: [
                "pid": .number(Double(pid)),
                "message": .string("process \(pid) belongs to no installed app"),
                "fix": .string("install the app's bundle with `offstage install BUNDLE_DIR` and start it from there"),
            ])
    }

    /// Runs a core call for an app, turning its error into the app interface's error.
    func appCall<Result>(_ body: () throws(CoreError) -> Result) throws(VarlinkError) -> Result {
        try AppCalls.appCall(body)
    }

    /// `Attach`: opens the app's callback stream (SPEC LC-8 for processes started by hand or re-adopted).
    func attach(_ context: VarlinkCallContext, _ request: VarlinkRequest, _ responder: VarlinkResponder) throws {
        try request.requireMore()
        let parameters = try request.decodeParameters(AppInterface.AttachParameters.self)
        let pid = context.peer.pid
        let id: AppID
        switch identify(context) {
        case .app(let app, _):
            id = app
        case .user:
            guard let app = appRunningExecutable(of: pid) else { throw notAnApp(pid) }
            // Started by hand: from now on the process lives in the app's group and is watched like any other.
            if let running = core.apps[app]?.process, running.pid != pid {
                throw VarlinkError(
                    "\(AppInterface.name).AlreadyRunning",
                    parameters: [
                        "message": .string("'\(app)' is already running as pid \(running.pid ?? 0)"),
                        "fix": .string("quit it (`offstage force-quit \(app)`) before starting another copy by hand"),
                    ])
            }
            try control.adopt(pid: pid, into: try group(for: app))
            let startTime = ProcFS().startTime(of: pid)
            try watcher.watch(pid: pid, startTime: startTime)
            appsByPid[pid] = app
            persist { try store.saveProcess(.init(app: app, pid: pid, startTime: startTime ?? 0, startedAt: now)) }
            forgetIdentities(of: pid)
            identities[context.connectionID] = (pid, .app(app, pid: pid))
            id = app
        }
        let report = AttachReport(parameters, at: now)
        let actions = try appCall { () throws(CoreError) in try core.attached(id, pid: pid, report: report, at: now) }
        streams[id] = AttachStream(pid: pid, connection: context.connectionID, responder: responder)
        responder.replyMore(
            AppInterface.AttachReply(
                app: AppInterface.AppInfo(
                    id: id.rawValue, pid: pid, multitaskingSupported: core.device.settings.multitaskingSupported,
                    dataDirectory: paths.data(id))))
        apply(actions)
    }
}
