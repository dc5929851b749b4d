import OffstageCore
import OffstageProtocol

/// The app who made a call: the shell found it from the call's connection (the daemon) or knows it (the test kit),
/// never from a field of the message.
public struct AppCaller: Sendable, Hashable {
    /// The app.
    public var app: AppID
    /// The app's process that called.
    public var pid: Int32

    /// The caller `app`, through its process `pid`.
    public init(app: AppID, pid: Int32) {
        self.app = app
        self.pid = pid
    }
}

/// How a shell answers one call: the core's actions to carry out first, then the reply.
public struct HostAnswer: Sendable {
    /// The reply's parameters.
    public var reply: any Encodable & Sendable
    /// What the core decided; the shell carries them out before it replies, so the caller never sees a reply about
    /// a change that was not made.
    public var actions: [CoreAction]
    /// The callback the call answered (`CallbackDone`), for what a shell keeps of callbacks in flight.
    public var answeredCallback: CallbackID?

    /// Replies `reply` after carrying out `actions`.
    public init(
        reply: any Encodable & Sendable = EmptyReply(), actions: [CoreAction] = [], answeredCallback: CallbackID? = nil
    ) {
        self.reply = reply
        self.actions = actions
        self.answeredCallback = answeredCallback
    }
}

/// The calls of `io.offstage.App` that only ask or tell the core — background tasks, callbacks answered, scheduled
/// work — answered the same way by every shell: the daemon on its socket, and the test kit in the app's own process.
/// What differs between shells (who the caller is, carrying out the actions, writing the reply) stays in each.
public enum AppCalls {
    /// The methods answered here, unqualified (`BeginBackgroundTask`).
    public static let methods: Set<String> = [
        "CallbackDone", "BeginBackgroundTask", "EndBackgroundTask", "BackgroundTimeRemaining", "GetDevice",
        "RegisterTask", "SubmitTask", "CancelTask", "CancelAllTasks", "PendingTasks", "SetFetchInterval",
        "ReportTaskProgress", "CompleteTask",
    ]

    /// Answers `method` (one of ``methods``) for `caller` at `now`.
    ///
    /// - Throws: the interface's error: `org.varlink.service.InvalidParameter` for parameters that do not decode or
    ///   are out of range, `io.offstage.App.<Code>` for what the core refused (``error(_:)``),
    ///   `org.varlink.service.MethodNotFound` for a method not answered here.
    public static func answer(
        _ method: String, _ call: VarlinkReceivedCall, caller: AppCaller, core: inout OffstageCore, at now: Instant
    ) throws(VarlinkError) -> HostAnswer {
        let (id, pid) = (caller.app, caller.pid)
        switch method {
        case "CallbackDone":
            let callback = CallbackID(try call.decodeParameters(as: AppInterface.CallbackDoneParameters.self).id)
            return HostAnswer(
                actions: core.callbackCompleted(id, pid: pid, callback: callback, at: now), answeredCallback: callback)
        case "BeginBackgroundTask":
            let parameters = try call.decodeParameters(as: AppInterface.BeginParameters.self)
            guard parameters.name.utf8.count <= 1024 else {
                throw VarlinkError.invalidParameter("name", description: "at most 1024 bytes")
            }
            let (task, actions) = try appCall { () throws(CoreError) in
                try core.beginBackgroundTask(id, pid: pid, name: parameters.name, at: now)
            }
            let remaining = (try? core.backgroundTimeRemaining(id, pid: pid, at: now)) ?? 0
            return HostAnswer(reply: AppInterface.BeginReply(id: task.rawValue, timeRemaining: remaining), actions: actions)
        case "EndBackgroundTask":
            let parameters = try call.decodeParameters(as: AppInterface.EndParameters.self)
            let (ended, actions) = try appCall { () throws(CoreError) in
                try core.endBackgroundTask(id, pid: pid, task: BackgroundTaskID(parameters.id), at: now)
            }
            return HostAnswer(reply: AppInterface.EndReply(ended: ended), actions: actions)
        case "BackgroundTimeRemaining":
            let seconds = try appCall { () throws(CoreError) in try core.backgroundTimeRemaining(id, pid: pid, at: now) }
            return HostAnswer(reply: AppInterface.TimeRemainingReply(seconds: seconds))
        case "GetDevice":
            return HostAnswer(
                reply: AppInterface.DeviceReply(multitaskingSupported: core.device.settings.multitaskingSupported))
        default:
            return try answerScheduling(method, call, caller: caller, core: &core, at: now)
        }
    }

    /// Scheduled background work (SPEC SCH-1..4).
    private static func answerScheduling(
        _ method: String, _ call: VarlinkReceivedCall, caller: AppCaller, core: inout OffstageCore, at now: Instant
    ) throws(VarlinkError) -> HostAnswer {
        let (id, pid) = (caller.app, caller.pid)
        switch method {
        case "RegisterTask":
            let parameters = try call.decodeParameters(as: AppInterface.IdentifierParameters.self)
            try appCall { () throws(CoreError) in
                try core.checkTaskIdentifier(id, pid: pid, identifier: parameters.identifier)
            }
            return HostAnswer()
        case "SubmitTask":
            let parameters = try call.decodeParameters(as: AppInterface.SubmitParameters.self)
            let taskRequest: TaskRequest
            switch parameters.request.request(submittedAt: now) {
            case .success(let value): taskRequest = value
            case .failure(let field):
                throw VarlinkError.invalidParameter("request.\(field.name)", description: field.description)
            }
            return HostAnswer(
                actions: try appCall { () throws(CoreError) in
                    try core.submitTask(id, pid: pid, request: taskRequest, at: now)
                })
        case "CancelTask":
            let parameters = try call.decodeParameters(as: AppInterface.IdentifierParameters.self)
            let (cancelled, actions) = try appCall { () throws(CoreError) in
                try core.cancelTask(id, pid: pid, identifier: parameters.identifier, at: now)
            }
            return HostAnswer(reply: AppInterface.CancelReply(cancelled: cancelled), actions: actions)
        case "CancelAllTasks":
            return HostAnswer(
                actions: try appCall { () throws(CoreError) in try core.cancelAllTasks(id, pid: pid, at: now) })
        case "PendingTasks":
            let requests = try appCall { () throws(CoreError) in try core.pendingTasks(id, pid: pid) }
            return HostAnswer(reply: AppInterface.PendingReply(requests: requests.map(AppInterface.TaskRequestMessage.init)))
        case "SetFetchInterval":
            let parameters = try call.decodeParameters(as: AppInterface.FetchIntervalParameters.self)
            let interval: FetchInterval
            switch parameters.fetchInterval {
            case .success(let value): interval = value
            case .failure(let field): throw VarlinkError.invalidParameter(field.name, description: field.description)
            }
            return HostAnswer(
                actions: try appCall { () throws(CoreError) in try core.setFetchInterval(id, pid: pid, interval, at: now) })
        case "ReportTaskProgress":
            let parameters = try call.decodeParameters(as: AppInterface.ProgressParameters.self)
            return HostAnswer(
                actions: try appCall { () throws(CoreError) in
                    try core.reportTaskProgress(
                        id, pid: pid, run: parameters.run, completed: parameters.completed, total: parameters.total,
                        title: parameters.title, subtitle: parameters.subtitle, at: now)
                })
        case "CompleteTask":
            let parameters = try call.decodeParameters(as: AppInterface.CompleteParameters.self)
            guard let result = TaskResult(rawValue: parameters.result) else {
                throw VarlinkError.invalidParameter("result", description: "must be newData, noData or failed")
            }
            return HostAnswer(
                actions: try appCall { () throws(CoreError) in
                    try core.completeTask(id, pid: pid, run: parameters.run, result: result, at: now)
                })
        default:
            throw VarlinkError.methodNotFound("\(AppInterface.name).\(method)")
        }
    }

    /// Runs a core call for an app, turning its error into the app interface's (``error(_:)``).
    public static func appCall<Result>(_ body: () throws(CoreError) -> Result) throws(VarlinkError) -> Result {
        do {
            return try body()
        } catch {
            throw Self.error(error)
        }
    }

    /// The app interface's error for what the core refused: `io.offstage.App.<Code>` with the core's message and fix.
    /// Codes the interface does not declare are `AppNotRunning`: the app's process is not the one the core knows.
    public static func error(_ error: CoreError) -> VarlinkError {
        let name =
            switch error.code {
            case .alreadyRunning: "AlreadyRunning"
            case .unavailable, .tooManyPendingRequests, .notPermitted, .invalidArgument, .noSuchTask: error.code.rawValue
            default: "AppNotRunning"
            }
        return VarlinkError(
            "\(AppInterface.name).\(name)", parameters: ["message": .string(error.message), "fix": .string(error.fix)])
    }
}
