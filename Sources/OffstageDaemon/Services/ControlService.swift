import Foundation
import NIOCore
import NIOPosix
import OffstageCore
import OffstageProtocol

/// `io.offstage.Control`: what the user may do. A process that belongs to an app is refused.
struct ControlService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(ControlInterface.definition)
    }

    var methods: [String: VarlinkMethodHandler] {
        userActionMethods.merging(schedulingMethods) { first, _ in first }
    }

    /// Installing, user actions, settings, log and status (SPEC CLI-1, CLI-2).
    var userActionMethods: [String: VarlinkMethodHandler] {
        [
            "Install": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.InstallParameters.self)
                engine.install(path: parameters.path, responder: responder)
            },
            "Uninstall": { context, request, responder in
                try engine.requireUser(context)
                let id = try engine.appID(request.decodeParameters(ControlInterface.AppParameters.self).id)
                try engine.control { () throws(CoreError) in try engine.core.uninstall(id, at: engine.now) }
                engine.replyWhenUninstalled(id, responder)
            },
            "ListApps": { context, _, responder in
                try engine.requireUser(context)
                engine.listApps(responder)
            },
            "Open": { context, request, responder in
                try engine.requireUser(context)
                let id = try engine.appID(request.decodeParameters(ControlInterface.AppParameters.self).id)
                try engine.control { () throws(CoreError) in try engine.core.open(id, at: engine.now) }
                responder.reply(try engine.openReply(id))
            },
            "Home": { context, _, responder in
                try engine.requireUser(context)
                engine.apply(engine.core.home(at: engine.now))
                responder.reply()
            },
            "Lock": { context, _, responder in
                try engine.requireUser(context)
                engine.apply(engine.core.lock(at: engine.now))
                responder.reply()
            },
            "Unlock": { context, _, responder in
                try engine.requireUser(context)
                engine.apply(engine.core.unlock(at: engine.now))
                responder.reply()
            },
            "Interrupt": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.InterruptParameters.self)
                var resolution: OffstageCore.InterruptionResolution?
                if let text = parameters.resolution {
                    guard let value = OffstageCore.InterruptionResolution(rawValue: text) else {
                        throw VarlinkError.invalidParameter("resolution", description: "must be accept or dismiss")
                    }
                    resolution = value
                }
                try engine.control { () throws(CoreError) in try engine.core.interrupt(resolution, at: engine.now) }
                responder.reply()
            },
            "ForceQuit": { context, request, responder in
                try engine.requireUser(context)
                let id = try engine.appID(request.decodeParameters(ControlInterface.AppParameters.self).id)
                try engine.control { () throws(CoreError) in try engine.core.forceQuit(id, at: engine.now) }
                responder.reply()
            },
            "GetSettings": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.GetSettingsParameters.self)
                responder.reply(ControlInterface.SettingsReply(settings: try engine.settings(for: parameters.app)))
            },
            "SetSettings": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.SetSettingsParameters.self)
                try engine.changeSettings(app: parameters.app, changes: parameters.changes)
                responder.reply(ControlInterface.SettingsReply(settings: try engine.settings(for: parameters.app)))
            },
            "Log": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.LogParameters.self)
                try engine.log(parameters, context: context, request: request, responder: responder)
            },
            "Status": { context, _, responder in
                try engine.requireUser(context)
                responder.reply(engine.statusReply())
            },
            "Metrics": { context, _, responder in
                try engine.requireUser(context)
                responder.reply(ControlInterface.MetricsReply(text: engine.metrics.exposition()))
            },
        ]
    }
}

extension DaemonEngine {
    /// Refuses app processes: an app cannot act as the user.
    func requireUser(_ context: VarlinkCallContext) throws(VarlinkError) {
        if case .app(let id, _) = identify(context) {
            throw VarlinkError.permissionDenied(
                description: "process \(context.peer.pid) belongs to the app '\(id)'; apps cannot act as the user")
        }
    }

    /// A syntactically valid app id, or `InvalidArgument`.
    func appID(_ text: String) throws(VarlinkError) -> AppID {
        guard let id = AppID.validated(text) else {
            throw CoreError(
                .invalidArgument, "\(QuotedText.quote(text)) is not an app id",
                fix: "use the CFBundleIdentifier, e.g. com.example.finite-task (see `offstage apps`)"
            ).varlink(in: ControlInterface.name)
        }
        return id
    }

    /// Runs a core user action and applies its actions, or answers with the core's error.
    func control(_ body: () throws(CoreError) -> [CoreAction]) throws(VarlinkError) {
        do {
            apply(try body())
        } catch {
            throw error.varlink(in: ControlInterface.name)
        }
    }

    // MARK: Install

    /// Copies and validates the bundle off the loop, then installs it on the loop; the reply waits until the
    /// installation is written (persist, then acknowledge). A copy the core refuses is removed again, and the folder
    /// of a replaced version once the new one is written (a crash in between is cleaned up at start-up).
    func install(path: String, responder: VarlinkResponder) {
        let installer = installer
        threadPool.runIfActive(eventLoop: eventLoop) { () throws -> BundleInstaller.StoredBundle in
            do {
                return try installer.install(bundleAt: path)
            } catch let error as ManifestError {
                throw InstallFailure.bundle(error)
            }
        }.whenComplete { [self] result in
            switch result {
            case .success(let stored):
                let id = stored.manifest.id
                let previous = core.apps[id]?.app.bundlePath
                let app = InstalledApp(
                    manifest: stored.manifest, bundlePath: stored.path, installedAt: now,
                    settings: core.apps[id]?.app.settings ?? AppSettings(), sourceExecutable: stored.sourceExecutable)
                do {
                    try FileManager.default.createDirectory(atPath: paths.data(id), withIntermediateDirectories: true)
                    let (outcome, actions) = try core.install(app, at: now)
                    apply(actions)
                    if let previous, previous != stored.path {
                        // Off the loop (a bundle may be large), after the new version is written.
                        let written = durableWrite ?? eventLoop.makeSucceededVoidFuture()
                        written.whenSuccess { [threadPool] in threadPool.submit { _ in installer.remove(bundleAt: previous) } }
                    }
                    responder.reply(ControlInterface.InstallReply(id: id.rawValue, outcome: outcome.rawValue))
                } catch let error as CoreError {
                    installer.remove(bundleAt: stored.path)
                    responder.fail(error.varlink(in: ControlInterface.name))
                } catch {
                    installer.remove(bundleAt: stored.path)
                    responder.fail(failed("cannot create the app's data folder: \(error)", fix: "check the state folder \(paths.root)"))
                }
            case .failure(InstallFailure.bundle(let error)):
                var parameters: [String: JSONValue] = [
                    "message": .string("\(error.file): \(error.key.map { "key '\($0)' " } ?? "")\(error.problem)"),
                    "fix": .string(error.fix), "file": .string(error.file),
                ]
                parameters["key"] = error.key.map { .string($0) } ?? .null
                responder.fail(VarlinkError("\(ControlInterface.name).InvalidBundle", parameters: parameters))
            case .failure(let error):
                responder.fail(failed("cannot copy the bundle at \(path): \(error)", fix: "check permissions and free space"))
            }
        }
    }

    /// Answers `Uninstall` once the app is gone: at once when it had no process, else when its process has ended and
    /// everything it had is removed (at most the will-terminate limit and the termination grace later).
    func replyWhenUninstalled(_ id: AppID, _ responder: VarlinkResponder) {
        guard core.apps[id] != nil else {
            responder.reply()
            return
        }
        uninstallWaiters[id, default: []].append(responder)
    }

    /// The reply to `Open`, or why nothing opened: the launch failed (the executable could not be started), or the
    /// app is not coming to the front.
    func openReply(_ id: AppID) throws(VarlinkError) -> ControlInterface.OpenReply {
        guard let entry = core.apps[id], let status = core.status(of: id, at: now) else {
            throw CoreError.notInstalled(id).varlink(in: ControlInterface.name)
        }
        if entry.process == nil, !entry.pendingOpen {
            let why = status.lastTermination.map { $0.summary } ?? "it exited at once"
            throw failed(
                "'\(id)' did not open: \(why)",
                fix: "check its executable (\(entry.app.bundlePath)/\(entry.app.manifest.executable)) and `offstage log --app \(id)`")
        }
        return ControlInterface.OpenReply(app: ControlInterface.App(status))
    }

    func failed(_ message: String, fix: String) -> VarlinkError {
        VarlinkError("\(ControlInterface.name).Failed", parameters: ["message": .string(message), "fix": .string(fix)])
    }

    // MARK: Settings

    func settings(for app: String?) throws(VarlinkError) -> [ControlInterface.Setting] {
        guard let app else {
            return zip(SettingsEditor.deviceKeys, SettingsEditor.values(of: core.device.settings)).map {
                ControlInterface.Setting(name: $0.0.name, value: $0.1.1, summary: $0.0.summary)
            }
        }
        let id = try appID(app)
        guard let entry = core.apps[id] else { throw CoreError.notInstalled(id).varlink(in: ControlInterface.name) }
        return zip(SettingsEditor.appKeys, SettingsEditor.values(of: entry.app.settings)).map {
            ControlInterface.Setting(name: $0.0.name, value: $0.1.1, summary: $0.0.summary)
        }
    }

    func changeSettings(app: String?, changes: [String: String]) throws(VarlinkError) {
        guard !changes.isEmpty else {
            throw VarlinkError.invalidParameter("changes", description: "give at least one NAME=on|off")
        }
        do {
            if let app {
                let id = try appID(app)
                guard let entry = core.apps[id] else { throw CoreError.notInstalled(id) }
                let updated = try SettingsEditor.apply(changes, to: entry.app.settings)
                apply(try core.setAppSettings(updated, for: id, at: now))
            } else {
                let updated = try SettingsEditor.apply(changes, to: core.device.settings)
                apply(core.setDeviceSettings(updated, at: now))
            }
        } catch let error as CoreError {
            throw error.varlink(in: ControlInterface.name)
        } catch let error as VarlinkError {
            throw error
        } catch {
            throw failed("\(error)", fix: "report this")
        }
    }

    // MARK: Log and status

    func log(
        _ parameters: ControlInterface.LogParameters, context: VarlinkCallContext, request: VarlinkRequest,
        responder: VarlinkResponder
    ) throws {
        let app = try parameters.app.map { text throws(VarlinkError) in try appID(text) }
        if let limit = parameters.limit {
            try VarlinkError.checking { () throws(NumberOutOfRange) in
                try CheckedNumber.integer(limit, field: "limit", in: 0 ... Int.max)
            }
        }
        let follow = parameters.follow ?? false
        if follow { try request.requireMore() }
        // Read behind every entry already handed to the log writer; a follower joins when that read is answered, so
        // it misses nothing written later and sees nothing twice (the writer runs jobs in order).
        readLog(app: app, limit: parameters.limit ?? (follow ? 50 : 1000)).whenComplete { [self] result in
            switch result {
            case .success(let rows):
                let reply = ControlInterface.LogReply(entries: rows.map { ControlInterface.LogLine(id: $0.0, entry: $0.1) })
                guard follow else {
                    responder.reply(reply)
                    return
                }
                if responder.replyMore(reply) { eventLog.followers[context.connectionID] = EventLogWriter.Follower(app: app, responder: responder) }
            case .failure(let error):
                responder.fail(failed("cannot read the event log: \(error)", fix: "check the state folder \(paths.root)"))
            }
        }
    }

    func statusReply() -> ControlInterface.StatusReply {
        let dataControls = network.status
        return ControlInterface.StatusReply(
            version: offstageVersion, pid: getpid(), freezer: control.kind.rawValue, freezerReason: freezerReason,
            dataControls: dataControls.state, dataControlsDetail: dataControls.detail,
            networkSource: machineWatcher?.reader.networkSource
                ?? "the network interfaces, read once at start (the kernel's change events cannot be watched here)",
            stateDirectory: paths.root, socket: configuration.socketPath,
            foregroundApp: core.device.foregroundApp?.rawValue, locked: core.device.locked,
            interruption: core.device.interruption != nil, apps: core.apps.count, memoryLimits: memory.limitsState,
            memoryLimitsDetail: memory.limitsDetail(watchInterval: configuration.daemon.memoryWatchInterval),
            memoryPressure: memoryPressureDetail)
    }
}

enum InstallFailure: Error {
    case bundle(ManifestError)
}

