import Foundation
import OffstageCore

@testable import OffstageProtocol

/// The properties every input of the `transfers` fuzz target must keep (SPEC TR-1..TR-6, §11: malformed input gets a
/// clear error and changes nothing). An input is one Varlink message, as an app's `io.offstage.Transfers` call would
/// be; it goes the way the daemon takes it: the codec, the wire parameters, their conversion to the core's request
/// (`TransfersInterface+Requests.swift`, with the upload's file resolved on a real folder), then a core in which the
/// app and another app each have a session of the same name with tasks in every state.
///
/// Compiled twice, like `NotificationFuzzChecks.swift`: into this test target (`TransfersFuzzRegressionTests`) and by
/// `scripts/fuzz` next to `Fuzz/Targets/TransfersFuzz.swift`. It imports only Foundation and the modules under test.
enum TransfersFuzzChecks {
    /// A property that did not hold, in words.
    struct Violation: Error, CustomStringConvertible {
        var description: String

        init(_ description: String) { self.description = description }
    }

    /// How far an input went.
    enum Outcome: Equatable {
        /// Not a call the codec reads, or not one of io.offstage.Transfers (other targets' concern).
        case notACall
        /// Its parameters are not the method's: InvalidParameter, naming one.
        case refusedParameters
        /// The conversion, the upload's file or the core refused it with a clear error, changing nothing.
        case refused
        /// Accepted, and what it did keeps the properties.
        case accepted
    }

    static let app: AppID = "com.example.fuzz"
    static let other: AppID = "com.example.other"
    static let pid: Int32 = 4242
    static let otherPid: Int32 = 4343
    /// The session both apps have (an app never sees the other's, though it has the same name).
    static let session = "com.example.downloads"
    static let now = Instant(secondsSinceEpoch: 1_800_000_000.125)

    /// The core every input starts from, and the tasks in it: `fuzz` has one waiting, one paused and one cancelled
    /// (finished) in its session; `other` has one waiting and one cancelled in its session of the same name.
    static let start: (core: OffstageCore, tasks: [String: UInt64]) = {
        var core = OffstageCore()
        var tasks: [String: UInt64] = [:]
        for (id, pid) in [(app, pid), (other, otherPid)] {
            core.restore(
                InstalledApp(manifest: Manifest(id: id, executable: "Fuzz"), bundlePath: "/b", installedAt: now, settings: .init()),
                durable: AppDurableState())
            _ = core.adopt(id, pid: pid, at: now)
            _ = try! core.openTransferSession(id, pid: pid, identifier: session, configuration: .init(), at: now)
            for name in ["waiting", "paused", "cancelled"] where id == app || name != "paused" {
                let request = TransferRequest(kind: .download, url: "https://files.example.com/\(name).bin", filename: "")
                let task = try! core.createTransfer(id, pid: pid, session: session, request: request, at: now).task
                tasks["\(id.rawValue)/\(name)"] = task.id
                if name == "paused" { _ = try! core.changeTransfer(task.id, .pause, app: id, at: now) }
                if name == "cancelled" { _ = try! core.changeTransfer(task.id, .cancel, app: id, at: now) }
            }
        }
        return (core, tasks)
    }()

    /// The app's data folder, on disk: `upload.bin` (a regular file), `dir/` (a folder), `link-out` (a link to the
    /// other app's `secret.bin`). Inputs write it `$DATA`: a `file` starting with `$DATA/` is given with the folder's
    /// real place, which differs between machines.
    /// The folder the app's and the other app's data folders are made in: this process's own, removed when it exits.
    static let dataRoot = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-transfers-fuzz-\(getpid())")

    static let dataFolder: String = {
        let root = dataRoot
        atexit { try? FileManager.default.removeItem(at: TransfersFuzzChecks.dataRoot) }
        let folder = root.appendingPathComponent(app.rawValue)
        let secret = root.appendingPathComponent(other.rawValue).appendingPathComponent("secret.bin")
        try? FileManager.default.createDirectory(at: folder.appendingPathComponent("dir"), withIntermediateDirectories: true)
        try? FileManager.default.createDirectory(at: secret.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? Data("upload".utf8).write(to: folder.appendingPathComponent("upload.bin"), options: .atomic)
        try? Data("secret".utf8).write(to: secret, options: .atomic)
        try? FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("link-out").path, withDestinationPath: secret.path)
        return folder.path
    }()

    @discardableResult
    static func check(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        guard let call = try? VarlinkCodec.decodeCall(Data(bytes)), call.header.method.hasPrefix(TransfersInterface.name + ".") else {
            return .notACall
        }
        var core = start.core
        let before = core.transfers
        let appsBefore = core.apps
        let outcome: Outcome
        do {
            switch call.header.method {
            case TransfersInterface.Method.openSession:
                let parameters = try decode(call, as: TransfersInterface.OpenSessionParameters.self)
                let actions = try core.openTransferSession(
                    app, pid: pid, identifier: parameters.identifier,
                    configuration: TransferSessionConfiguration(
                        discretionary: parameters.discretionary ?? false, sendsLaunchEvents: parameters.sendsLaunchEvents ?? true,
                        allowsMeteredNetwork: parameters.allowsMeteredNetwork ?? true),
                    at: now)
                try checkOpened(core, parameters, actions)
            case TransfersInterface.Method.createTask:
                let parameters = try decode(call, as: TransfersInterface.CreateTaskParameters.self)
                var request = try parameters.request()
                if request.kind == .upload, let file = parameters.file {
                    let given = file.hasPrefix("$DATA/") ? dataFolder + file.dropFirst(5) : file
                    let source = try TransfersInterface.uploadSource(given, dataFolder: dataFolder)
                    guard source.hasPrefix(dataFolder + "/"), !source.contains("/../") else {
                        throw Violation("the upload's file \(given) was taken as \(source), outside the app's folder")
                    }
                    request.uploadFile = "/spool/\(app.rawValue)/1"
                }
                let (task, actions) = try core.createTransfer(app, pid: pid, session: parameters.session, request: request, at: now)
                try TransfersFuzzModel.checkCreated(core, task, parameters, actions)
            case TransfersInterface.Method.tasks:
                let parameters = try decode(call, as: TransfersInterface.TasksParameters.self)
                let (tasks, _) = try core.fetchTransferEvents(app, pid: pid, session: parameters.session, at: now)
                let key = TransferSessionKey(app: app, identifier: parameters.session)
                guard tasks == core.transfers.tasks(in: key), tasks.allSatisfy({ $0.app == app && $0.session == parameters.session }) else {
                    throw Violation("Tasks listed \(tasks.map(\.id)), not exactly the app's tasks of its session")
                }
                try roundTrip(TransfersInterface.TasksReply(tasks: tasks.map { .init($0, file: nil, waitingFor: nil) }))
            case TransfersInterface.Method.acknowledge:
                let parameters = try decode(call, as: TransfersInterface.AcknowledgeParameters.self)
                let actions = try core.acknowledgeTransfers(app, pid: pid, session: parameters.session, ids: parameters.ids, at: now)
                try checkAcknowledged(core, before, parameters, actions)
            case TransfersInterface.Method.changeTask:
                let parameters = try decode(call, as: TransfersInterface.ChangeTaskParameters.self)
                let change = try TransfersInterface.change(parameters.change)
                let actions = try core.changeTransfer(parameters.id, change, app: app, at: now)
                try checkChanged(core, before, parameters.id, change, actions)
            case TransfersInterface.Method.completeEvents:
                let parameters = try decode(call, as: TransfersInterface.CompleteEventsParameters.self)
                _ = try core.completeTransferEvents(app, pid: pid, run: parameters.run, at: now)
                guard core.transfers.tasks == before.tasks, core.transfers.sessions == before.sessions else {
                    throw Violation("CompleteEvents of a run the app does not have changed the transfers")
                }
            default:
                return .notACall
            }
            outcome = .accepted
        } catch let error as ParametersRefused {
            return try error.check()
        } catch let violation as Violation {
            throw violation
        } catch {
            try checkRefusal(error, call.header.method)
            guard core.transfers == before, core.apps == appsBefore else {
                throw Violation("a refused \(call.header.method) changed the core")
            }
            outcome = .refused
        }
        try TransfersFuzzModel.checkQueue(core)
        return outcome
    }

    /// Undecodable parameters: the daemon answers with this error before asking the core anything.
    struct ParametersRefused: Error {
        var error: VarlinkError

        func check() throws(Violation) -> Outcome {
            guard error.name == VarlinkError.Name.invalidParameter, let named = error.stringParameter("parameter"), !named.isEmpty else {
                throw Violation("undecodable parameters refused as \(error), not InvalidParameter naming one")
            }
            return .refusedParameters
        }
    }

    private static func decode<P: Decodable>(_ call: VarlinkReceivedCall, as type: P.Type) throws -> P {
        do throws(VarlinkError) {
            return try call.decodeParameters(as: type)
        } catch {
            throw ParametersRefused(error: error)
        }
    }

    /// A refusal is one of the errors the interface documents, with a message that names what was wrong and a fix.
    private static func checkRefusal(_ error: any Error, _ method: String) throws(Violation) {
        guard let error = error as? CoreError else { throw Violation("\(method) refused with \(error), not a core error") }
        let allowed: [CoreError.Code] = [.invalidArgument, .noSuchTask, .tooManyPendingRequests]
        guard allowed.contains(error.code), !error.message.isEmpty, !error.fix.isEmpty else {
            throw Violation("\(method) refused with \(error.code), or without a message or a fix: \(error)")
        }
        let fields = ["kind", "URL", "method", "header", "file", "earliest", "session", "transfer", "change", "upload", "download"]
        guard fields.contains(where: { error.message.contains($0) }) else {
            throw Violation("\(method) refused with a message naming no field: \(error.message)")
        }
    }

    private static func checkOpened(
        _ core: OffstageCore, _ parameters: TransfersInterface.OpenSessionParameters, _ actions: [CoreAction]
    ) throws(Violation) {
        let key = TransferSessionKey(app: app, identifier: parameters.identifier)
        guard let session = core.transfers.sessions[key],
            session.configuration.discretionary == (parameters.discretionary ?? false),
            session.configuration.sendsLaunchEvents == (parameters.sendsLaunchEvents ?? true),
            session.configuration.allowsMeteredNetwork == (parameters.allowsMeteredNetwork ?? true)
        else { throw Violation("the opened session \(key) is missing or not configured as asked") }
        let unchanged = start.core.transfers.sessions[key] == session
        guard unchanged || actions.contains(.transfer(.saveSession(session))) else {
            throw Violation("the session \(key) was opened or changed without being saved")
        }
        guard core.transfers.sessions.filter({ $0.key.app != app }) == start.core.transfers.sessions.filter({ $0.key.app != app }) else {
            throw Violation("opening a session changed another app's")
        }
    }

    private static func checkAcknowledged(
        _ core: OffstageCore, _ before: TransferQueue, _ parameters: TransfersInterface.AcknowledgeParameters, _ actions: [CoreAction]
    ) throws(Violation) {
        for (id, task) in before.tasks {
            let forgotten = task.app == app && task.session == parameters.session && task.state.isFinished && parameters.ids.contains(id)
            guard (core.transfers.tasks[id] == nil) == forgotten, core.transfers.tasks[id] == nil || core.transfers.tasks[id] == task else {
                throw Violation("acknowledging \(parameters.ids) \(forgotten ? "kept" : "forgot or changed") task \(id) of \(task.app)")
            }
            guard !forgotten || actions.contains(.transfer(.delete(task))) else { throw Violation("task \(id) forgotten, not deleted") }
        }
    }

    private static func checkChanged(
        _ core: OffstageCore, _ before: TransferQueue, _ id: UInt64, _ change: TransferChange, _ actions: [CoreAction]
    ) throws(Violation) {
        guard let old = before.tasks[id], old.app == app, let new = core.transfers.tasks[id] else {
            throw Violation("ChangeTask of task \(id), not the app's, was accepted")
        }
        let expected: [TransferChange: [TransferState]] = [.cancel: [.failed], .pause: [.paused], .resume: [.waiting, .running]]
        guard expected[change]!.contains(new.state), actions.contains(where: { if case .transfer(.save(let saved)) = $0 { saved.id == id } else { false } })
        else { throw Violation("\(change) left task \(id) \(new.state), or unsaved") }
        for (other, task) in before.tasks where other != id && task.app != app {
            guard core.transfers.tasks[other] == task else { throw Violation("changing task \(id) changed \(task.app)'s task \(other)") }
        }
    }

    /// Encoding a reply and decoding it gives it back.
    static func roundTrip<R: Codable & Equatable>(_ reply: R) throws(Violation) {
        do {
            let back = try JSONDecoder().decode(R.self, from: JSONEncoder().encode(reply))
            guard back == reply else { throw Violation("the reply reads back differently: \(back) for \(reply)") }
        } catch let violation as Violation {
            throw violation
        } catch {
            throw Violation("the reply does not encode and read back: \(error)")
        }
    }
}
