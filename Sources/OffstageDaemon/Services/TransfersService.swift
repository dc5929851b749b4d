import Foundation
import NIOCore
import OffstageCore
import OffstageProtocol

/// `io.offstage.Transfers`: the calls an app's SDK makes for background transfers (SPEC §5). The app is the one that
/// owns the calling process (peer credentials): it opens, sees and changes only its own sessions and tasks.
struct TransfersService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(TransfersInterface.definition)
    }

    static let interface = TransfersInterface.name

    var methods: [String: VarlinkMethodHandler] {
        [
            "OpenSession": { context, request, responder in
                let parameters = try request.decodeParameters(TransfersInterface.OpenSessionParameters.self)
                let (id, pid) = try engine.requireApp(context, in: Self.interface)
                let configuration = TransferSessionConfiguration(
                    discretionary: parameters.discretionary ?? false, sendsLaunchEvents: parameters.sendsLaunchEvents ?? true,
                    allowsMeteredNetwork: parameters.allowsMeteredNetwork ?? true)
                try engine.transferCall { now throws(CoreError) in
                    try engine.core.openTransferSession(id, pid: pid, identifier: parameters.identifier, configuration: configuration, at: now)
                }
                responder.reply()
            },
            "CreateTask": { context, request, responder in
                let parameters = try request.decodeParameters(TransfersInterface.CreateTaskParameters.self)
                let (id, pid) = try engine.requireApp(context, in: Self.interface)
                let request = try Self.request(parameters)
                guard request.kind == .upload, let file = parameters.file else {
                    responder.reply(try engine.createTransfer(id, pid: pid, session: parameters.session, request: request))
                    return
                }
                // The upload's file, checked to be the app's, is linked (or copied, off the loop) into the daemon's
                // spool before the task exists.
                let source = try engine.uploadSource(file, of: id)
                let spool = engine.transferPaths.newUploadSpool(id)
                engine.spoolUpload(source, to: spool).whenComplete { result in
                    do {
                        try result.get()
                        var spooled = request
                        spooled.uploadFile = spool
                        responder.reply(try engine.createTransfer(id, pid: pid, session: parameters.session, request: spooled))
                    } catch let error as VarlinkError {
                        unlink(spool)
                        responder.fail(error)
                    } catch {
                        unlink(spool)
                        responder.fail(
                            CoreError(
                                .invalidArgument, "the upload's file \(QuotedText.quote(file)) cannot be read: \(error)",
                                fix: "give a readable regular file in the app's data folder"
                            ).varlink(in: Self.interface))
                    }
                }
            },
            "Tasks": { context, request, responder in
                let parameters = try request.decodeParameters(TransfersInterface.TasksParameters.self)
                let (id, pid) = try engine.requireApp(context, in: Self.interface)
                let tasks = try engine.transferCall { now throws(CoreError) in
                    try engine.core.fetchTransferEvents(id, pid: pid, session: parameters.session, at: now)
                }
                responder.reply(TransfersInterface.TasksReply(tasks: tasks.map(engine.taskMessage)))
            },
            "Acknowledge": { context, request, responder in
                let parameters = try request.decodeParameters(TransfersInterface.AcknowledgeParameters.self)
                let (id, pid) = try engine.requireApp(context, in: Self.interface)
                try engine.transferCall { now throws(CoreError) in
                    try engine.core.acknowledgeTransfers(id, pid: pid, session: parameters.session, ids: parameters.ids, at: now)
                }
                responder.reply()
            },
            "ChangeTask": { context, request, responder in
                let parameters = try request.decodeParameters(TransfersInterface.ChangeTaskParameters.self)
                let (id, _) = try engine.requireApp(context, in: Self.interface)
                let change = try Self.change(parameters.change, in: Self.interface)
                try engine.transferCall { now throws(CoreError) in
                    try engine.core.changeTransfer(parameters.id, change, app: id, at: now)
                }
                responder.reply()
            },
            "CompleteEvents": { context, request, responder in
                let parameters = try request.decodeParameters(TransfersInterface.CompleteEventsParameters.self)
                let (id, pid) = try engine.requireApp(context, in: Self.interface)
                try engine.transferCall { now throws(CoreError) in
                    try engine.core.completeTransferEvents(id, pid: pid, run: parameters.run, at: now)
                }
                responder.reply()
            },
        ]
    }

    /// The core's request from the call's parameters; a bad kind or date is refused naming it.
    static func request(_ parameters: TransfersInterface.CreateTaskParameters) throws(VarlinkError) -> TransferRequest {
        guard let kind = TransferKind(rawValue: parameters.kind) else {
            throw CoreError(
                .invalidArgument, "kind \(QuotedText.quote(parameters.kind)) is not a transfer kind", fix: "use download or upload"
            ).varlink(in: interface)
        }
        if kind == .download, parameters.file != nil {
            throw CoreError(.invalidArgument, "a download takes no file", fix: "give file only with an upload").varlink(in: interface)
        }
        if let seconds = parameters.earliestBegin, !seconds.isFinite {
            throw CoreError(.invalidArgument, "earliestBegin is not a number of seconds", fix: "give seconds since the epoch").varlink(in: interface)
        }
        return TransferRequest(
            kind: kind, url: parameters.url, method: parameters.method,
            headers: (parameters.headers ?? []).map { TransferHeader(name: $0.name, value: $0.value) },
            uploadFile: kind == .upload ? (parameters.file ?? "") : nil, discretionary: parameters.discretionary ?? false,
            earliestBegin: parameters.earliestBegin.map { Instant(secondsSinceEpoch: $0) }, filename: parameters.filename ?? "")
    }

    /// The change a call asks for, or `InvalidArgument`.
    static func change(_ text: String, in interface: String) throws(VarlinkError) -> TransferChange {
        guard let change = TransferChange(rawValue: text) else {
            throw CoreError(.invalidArgument, "change \(QuotedText.quote(text)) is not cancel, pause or resume", fix: "use cancel, pause or resume")
                .varlink(in: interface)
        }
        return change
    }
}

extension DaemonEngine {
    /// Runs one transfer input of the core and applies its actions; a refusal is the interface's error.
    func transferCall<Value>(
        in interface: String = TransfersInterface.name, _ body: (Instant) throws(CoreError) -> (Value, [CoreAction])
    ) throws(VarlinkError) -> Value {
        do throws(CoreError) {
            let (value, actions) = try body(now)
            apply(actions)
            return value
        } catch {
            throw error.varlink(in: interface)
        }
    }

    /// ``transferCall(in:_:)`` for inputs that return only actions.
    func transferCall(in interface: String = TransfersInterface.name, _ body: (Instant) throws(CoreError) -> [CoreAction]) throws(VarlinkError) {
        try transferCall(in: interface) { now throws(CoreError) in ((), try body(now)) }
    }

    /// Creates the task (journaled before the reply) and answers with it.
    func createTransfer(_ id: AppID, pid: Int32, session: String, request: TransferRequest) throws(VarlinkError) -> TransfersInterface.CreateTaskReply {
        let task = try transferCall { now throws(CoreError) in try core.createTransfer(id, pid: pid, session: session, request: request, at: now) }
        return TransfersInterface.CreateTaskReply(task: taskMessage(core.transfers.tasks[task.id] ?? task))
    }

    /// A task as the app sees it: where its finished download is, and why it waits.
    func taskMessage(_ task: TransferTask) -> TransfersInterface.TaskMessage {
        let file = task.state == .completed && task.request.kind == .download ? transferPaths.handedOver(task) : nil
        let waiting = task.state == .waiting ? core.transferWaitingFor(task, at: now).joined(separator: "; ") : nil
        return TransfersInterface.TaskMessage(task, file: file, waitingFor: waiting)
    }

    /// The upload's file as the app named it, resolved: a regular file inside the app's data folder, or
    /// `InvalidArgument` naming it.
    func uploadSource(_ file: String, of id: AppID) throws(VarlinkError) -> String {
        let folder = paths.data(id)
        let refuse = { (why: String) -> VarlinkError in
            CoreError(
                .invalidArgument, "the upload's file \(QuotedText.quote(file)) \(why)",
                fix: "give a regular file inside the app's data folder (\(folder))"
            ).varlink(in: TransfersInterface.name)
        }
        guard file.hasPrefix("/"), let resolved = realpath(file, nil) else { throw refuse("does not exist or is not an absolute path") }
        defer { free(resolved) }
        let path = String(cString: resolved)
        let root = realpath(folder, nil).map { pointer in defer { free(pointer) }; return String(cString: pointer) } ?? folder
        guard path.hasPrefix(root + "/") else { throw refuse("is outside the app's data folder") }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw refuse("is not a regular file") }
        return path
    }

    /// Puts a link to `source` at `spool` (the same file system), or a copy made off the loop.
    func spoolUpload(_ source: String, to spool: String) -> EventLoopFuture<Void> {
        do {
            try FileManager.default.createDirectory(
                atPath: (spool as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        if link(source, spool) == 0 { return eventLoop.makeSucceededVoidFuture() }
        return threadPool.runIfActive(eventLoop: eventLoop) {
            try FileManager.default.copyItem(atPath: source, toPath: spool)
        }
    }
}
