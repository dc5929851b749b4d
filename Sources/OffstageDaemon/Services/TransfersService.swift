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

    /// The core's request from the call's parameters (``TransfersInterface/CreateTaskParameters/request()``); a bad
    /// kind or date is refused naming it.
    static func request(_ parameters: TransfersInterface.CreateTaskParameters) throws(VarlinkError) -> TransferRequest {
        do throws(CoreError) {
            return try parameters.request()
        } catch {
            throw error.varlink(in: interface)
        }
    }

    /// The change a call asks for, or `InvalidArgument`.
    static func change(_ text: String, in interface: String) throws(VarlinkError) -> TransferChange {
        do throws(CoreError) {
            return try TransfersInterface.change(text)
        } catch {
            throw error.varlink(in: interface)
        }
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
    /// `InvalidArgument` naming it (``TransfersInterface/uploadSource(_:dataFolder:)``).
    func uploadSource(_ file: String, of id: AppID) throws(VarlinkError) -> String {
        do throws(CoreError) {
            return try TransfersInterface.uploadSource(file, dataFolder: paths.data(id))
        } catch {
            throw error.varlink(in: TransfersInterface.name)
        }
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
