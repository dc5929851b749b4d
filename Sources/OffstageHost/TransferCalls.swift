import Foundation
import OffstageCore
import OffstageProtocol

/// The calls of `io.offstage.Transfers` that ask or tell the core (SPEC §5), answered the same way by every shell.
/// Where bytes live is each shell's own: ``handedOver`` says where a completed download is given to its app, and an
/// upload's file is spooled by the shell before ``create(_:session:caller:core:at:)`` (the daemon links it into its
/// state directory off its event loop; the test kit copies it into the device's folder).
public struct TransferCalls: Sendable {
    /// The methods answered by ``answer(_:_:caller:core:at:)``, unqualified. `CreateTask` is answered there for a
    /// download; an upload's needs its file spooled first.
    public static let methods: Set<String> = ["OpenSession", "Tasks", "Acknowledge", "ChangeTask", "CompleteEvents"]

    /// Where a completed download is handed to its app: a path in the app's data folder.
    public let handedOver: @Sendable (TransferTask) -> String

    /// Calls answered with completed downloads at `handedOver`.
    public init(handedOver: @escaping @Sendable (TransferTask) -> String) {
        self.handedOver = handedOver
    }

    /// Answers `method` (one of ``methods``) for `caller` at `now`.
    ///
    /// - Throws: `org.varlink.service.InvalidParameter` for parameters that do not decode, and
    ///   `io.offstage.Transfers.<Code>` for what the core refused.
    public func answer(
        _ method: String, _ call: VarlinkReceivedCall, caller: AppCaller, core: inout OffstageCore, at now: Instant
    ) throws(VarlinkError) -> HostAnswer {
        let (id, pid) = (caller.app, caller.pid)
        switch method {
        case "OpenSession":
            let parameters = try call.decodeParameters(as: TransfersInterface.OpenSessionParameters.self)
            let configuration = TransferSessionConfiguration(
                discretionary: parameters.discretionary ?? false, sendsLaunchEvents: parameters.sendsLaunchEvents ?? true,
                allowsMeteredNetwork: parameters.allowsMeteredNetwork ?? true)
            return HostAnswer(
                actions: try Self.refusing { () throws(CoreError) in
                    try core.openTransferSession(id, pid: pid, identifier: parameters.identifier, configuration: configuration, at: now)
                })
        case "Tasks":
            let parameters = try call.decodeParameters(as: TransfersInterface.TasksParameters.self)
            let (tasks, actions) = try Self.refusing { () throws(CoreError) in
                try core.fetchTransferEvents(id, pid: pid, session: parameters.session, at: now)
            }
            return HostAnswer(
                reply: TransfersInterface.TasksReply(tasks: tasks.map { message($0, core: core, at: now) }), actions: actions)
        case "Acknowledge":
            let parameters = try call.decodeParameters(as: TransfersInterface.AcknowledgeParameters.self)
            return HostAnswer(
                actions: try Self.refusing { () throws(CoreError) in
                    try core.acknowledgeTransfers(id, pid: pid, session: parameters.session, ids: parameters.ids, at: now)
                })
        case "ChangeTask":
            let parameters = try call.decodeParameters(as: TransfersInterface.ChangeTaskParameters.self)
            let change = try Self.change(parameters.change, in: TransfersInterface.name)
            return HostAnswer(
                actions: try Self.refusing { () throws(CoreError) in
                    try core.changeTransfer(parameters.id, change, app: id, at: now)
                })
        case "CompleteEvents":
            let parameters = try call.decodeParameters(as: TransfersInterface.CompleteEventsParameters.self)
            return HostAnswer(
                actions: try Self.refusing { () throws(CoreError) in
                    try core.completeTransferEvents(id, pid: pid, run: parameters.run, at: now)
                })
        default:
            throw VarlinkError.methodNotFound("\(TransfersInterface.name).\(method)")
        }
    }

    /// Creates the task `request` asks for (an upload's file spooled by the shell already) in the caller's `session`:
    /// the reply, and the core's actions, which journal it (carry them out before replying).
    ///
    /// - Throws: `io.offstage.Transfers.<Code>` for what the core refused.
    public func create(
        _ request: TransferRequest, session: String, caller: AppCaller, core: inout OffstageCore, at now: Instant
    ) throws(VarlinkError) -> (reply: TransfersInterface.CreateTaskReply, actions: [CoreAction]) {
        let (task, actions) = try Self.refusing { () throws(CoreError) in
            try core.createTransfer(caller.app, pid: caller.pid, session: session, request: request, at: now)
        }
        let created = core.transfers.tasks[task.id] ?? task
        return (TransfersInterface.CreateTaskReply(task: message(created, core: core, at: now)), actions)
    }

    /// A task as the app sees it: where its completed download is, and why it waits.
    public func message(_ task: TransferTask, core: OffstageCore, at now: Instant) -> TransfersInterface.TaskMessage {
        let file = task.state == .completed && task.request.kind == .download ? handedOver(task) : nil
        let waiting = task.state == .waiting ? core.transferWaitingFor(task, at: now).joined(separator: "; ") : nil
        return TransfersInterface.TaskMessage(task, file: file, waitingFor: waiting)
    }

    /// The core's request from a `CreateTask` call's parameters (``TransfersInterface/CreateTaskParameters/request()``);
    /// a bad kind, date or URL is refused naming it.
    public static func request(_ parameters: TransfersInterface.CreateTaskParameters) throws(VarlinkError) -> TransferRequest {
        try refusing { () throws(CoreError) in try parameters.request() }
    }

    /// The change a call of `interface` asks for, or its `InvalidArgument`.
    public static func change(_ text: String, in interface: String) throws(VarlinkError) -> TransferChange {
        try refusing(in: interface) { () throws(CoreError) in try TransfersInterface.change(text) }
    }

    /// Runs a core input; a refusal is the interface's error.
    static func refusing<Value>(
        in interface: String = TransfersInterface.name, _ body: () throws(CoreError) -> Value
    ) throws(VarlinkError) -> Value {
        do throws(CoreError) {
            return try body()
        } catch {
            throw error.varlink(in: interface)
        }
    }
}
