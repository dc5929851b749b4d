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
                responder.reply()
            },
            "ListApps": { context, _, responder in
                try engine.requireUser(context)
                let now = engine.now
                responder.reply(ControlInterface.AppsReply(apps: engine.core.statuses(at: now).map(ControlInterface.App.init)))
            },
            "Open": { context, request, responder in
                try engine.requireUser(context)
                let id = try engine.appID(request.decodeParameters(ControlInterface.AppParameters.self).id)
                try engine.control { () throws(CoreError) in try engine.core.open(id, at: engine.now) }
                let status = engine.core.status(of: id, at: engine.now)!
                responder.reply(ControlInterface.OpenReply(app: ControlInterface.App(status)))
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
                .invalidArgument, "'\(text)' is not an app id",
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

    /// Validates and copies the bundle off the loop, then persists and installs on it (persist, then act).
    func install(path: String, responder: VarlinkResponder) {
        let installer = installer
        let loop = eventLoop
        threadPool.runIfActive(eventLoop: loop) { () throws -> (Manifest, String, String?) in
            let manifest: Manifest
            do throws(ManifestError) {
                manifest = try installer.inspect(bundleAt: path)
            } catch {
                throw InstallFailure.bundle(error)
            }
            let stored = try installer.store(bundleAt: path, manifest: manifest)
            let source = URL(fileURLWithPath: path + "/" + manifest.executable).resolvingSymlinksInPath().path
            return (manifest, stored, source)
        }.whenComplete { [self] result in
            switch result {
            case .success(let (manifest, stored, source)):
                let existing = core.apps[manifest.id]
                let app = InstalledApp(
                    manifest: manifest, bundlePath: stored, installedAt: now,
                    settings: existing?.app.settings ?? AppSettings(), sourceExecutable: source)
                do {
                    try FileManager.default.createDirectory(atPath: paths.data(manifest.id), withIntermediateDirectories: true)
                } catch {
                    responder.fail(failed("cannot create the app's data folder: \(error)", fix: "check the state folder \(paths.root)"))
                    return
                }
                // The core saves the installation; the reply waits until it is written.
                let (outcome, actions) = core.install(app, at: now)
                apply(actions)
                responder.reply(ControlInterface.InstallReply(id: manifest.id.rawValue, outcome: outcome.rawValue))
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
        if let limit = parameters.limit, limit < 0 {
            throw VarlinkError.invalidParameter("limit", description: "must be 0 or more")
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
                if responder.replyMore(reply) { followers[context.connectionID] = LogFollower(app: app, responder: responder) }
            case .failure(let error):
                responder.fail(failed("cannot read the event log: \(error)", fix: "check the state folder \(paths.root)"))
            }
        }
    }

    func statusReply() -> ControlInterface.StatusReply {
        ControlInterface.StatusReply(
            version: offstageVersion, pid: getpid(), freezer: control.kind.rawValue, freezerReason: freezerReason,
            stateDirectory: paths.root, socket: configuration.socketPath,
            foregroundApp: core.device.foregroundApp?.rawValue, locked: core.device.locked,
            interruption: core.device.interruption != nil, apps: core.apps.count)
    }
}

enum InstallFailure: Error {
    case bundle(ManifestError)
}

