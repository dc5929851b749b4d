import OffstageCore
import OffstageHost
import OffstageProtocol

/// `io.offstage.TransfersControl`: every app's background transfers for the user (`offstage transfers`, SPEC §5):
/// what each does and why it waits, and pause, resume and cancel by hand. A process that belongs to an app is refused.
struct TransfersControlService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(TransfersControlInterface.definition)
    }

    static let interface = TransfersControlInterface.name

    var methods: [String: VarlinkMethodHandler] {
        [
            "List": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(TransfersControlInterface.ListParameters.self)
                let app = try parameters.app.map { text throws(VarlinkError) in try engine.installedApp(text, in: Self.interface) }
                let tasks = app.map { engine.core.transfers.tasks(of: $0) } ?? engine.core.transfers.tasks.values.sorted { $0.id < $1.id }
                responder.reply(TransfersControlInterface.ListReply(transfers: tasks.map(engine.transferMessage)))
            },
            "Change": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(TransfersControlInterface.ChangeParameters.self)
                let change = try TransferCalls.change(parameters.change, in: Self.interface)
                try engine.transferCall(in: Self.interface) { now throws(CoreError) in
                    try engine.core.changeTransfer(parameters.id, change, app: nil, at: now)
                }
                responder.reply()
            },
        ]
    }
}

extension DaemonEngine {
    /// A task as the CLI shows it.
    func transferMessage(_ task: TransferTask) -> TransfersControlInterface.TransferMessage {
        TransfersControlInterface.TransferMessage(
            app: task.app.rawValue, session: task.session, id: task.id, kind: task.request.kind.rawValue, url: task.request.url,
            state: task.state.rawValue, bytesDone: task.bytesDone, bytesExpected: task.bytesExpected,
            discretionary: task.request.discretionary, attempts: task.attempts, waitingFor: core.transferWaitingFor(task, at: now),
            retryAt: task.retryAt?.secondsSinceEpoch, lastError: task.lastError, httpStatus: task.httpStatus,
            failure: task.failure.map(TransfersInterface.FailureMessage.init), createdAt: task.createdAt.secondsSinceEpoch,
            finishedAt: task.finishedAt?.secondsSinceEpoch)
    }
}
