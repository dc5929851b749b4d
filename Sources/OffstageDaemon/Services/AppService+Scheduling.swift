import OffstageCore
import OffstageProtocol

/// `io.offstage.App`: scheduled background work (SPEC SCH-1..4). The calling app comes from the connection.
extension AppService {
    var schedulingMethods: [String: VarlinkMethodHandler] {
        [
            "RegisterTask": { context, request, responder in
                let parameters = try request.decodeParameters(AppInterface.IdentifierParameters.self)
                let (id, pid) = try engine.requireApp(context)
                try engine.appCall { () throws(CoreError) in
                    try engine.core.checkTaskIdentifier(id, pid: pid, identifier: parameters.identifier)
                }
                responder.reply()
            },
            "SubmitTask": { context, request, responder in
                let parameters = try request.decodeParameters(AppInterface.SubmitParameters.self)
                let (id, pid) = try engine.requireApp(context)
                let now = engine.now
                let taskRequest: TaskRequest
                switch parameters.request.request(submittedAt: now) {
                case .success(let value): taskRequest = value
                case .failure(let field):
                    throw VarlinkError.invalidParameter("request.\(field.name)", description: field.description)
                }
                let actions = try engine.appCall { () throws(CoreError) in
                    try engine.core.submitTask(id, pid: pid, request: taskRequest, at: now)
                }
                engine.apply(actions)
                responder.reply()
            },
            "CancelTask": { context, request, responder in
                let parameters = try request.decodeParameters(AppInterface.IdentifierParameters.self)
                let (id, pid) = try engine.requireApp(context)
                let (cancelled, actions) = try engine.appCall { () throws(CoreError) in
                    try engine.core.cancelTask(id, pid: pid, identifier: parameters.identifier, at: engine.now)
                }
                engine.apply(actions)
                responder.reply(AppInterface.CancelReply(cancelled: cancelled))
            },
            "CancelAllTasks": { context, _, responder in
                let (id, pid) = try engine.requireApp(context)
                let actions = try engine.appCall { () throws(CoreError) in
                    try engine.core.cancelAllTasks(id, pid: pid, at: engine.now)
                }
                engine.apply(actions)
                responder.reply()
            },
            "PendingTasks": { context, _, responder in
                let (id, pid) = try engine.requireApp(context)
                let requests = try engine.appCall { () throws(CoreError) in try engine.core.pendingTasks(id, pid: pid) }
                responder.reply(AppInterface.PendingReply(requests: requests.map(AppInterface.TaskRequestMessage.init)))
            },
            "SetFetchInterval": { context, request, responder in
                let parameters = try request.decodeParameters(AppInterface.FetchIntervalParameters.self)
                let interval: FetchInterval
                switch parameters.fetchInterval {
                case .success(let value): interval = value
                case .failure(let field): throw VarlinkError.invalidParameter(field.name, description: field.description)
                }
                let (id, pid) = try engine.requireApp(context)
                let actions = try engine.appCall { () throws(CoreError) in
                    try engine.core.setFetchInterval(id, pid: pid, interval, at: engine.now)
                }
                engine.apply(actions)
                responder.reply()
            },
            "ReportTaskProgress": { context, request, responder in
                let parameters = try request.decodeParameters(AppInterface.ProgressParameters.self)
                let (id, pid) = try engine.requireApp(context)
                let actions = try engine.appCall { () throws(CoreError) in
                    try engine.core.reportTaskProgress(
                        id, pid: pid, run: parameters.run, completed: parameters.completed, total: parameters.total,
                        title: parameters.title, subtitle: parameters.subtitle, at: engine.now)
                }
                engine.apply(actions)
                responder.reply()
            },
            "CompleteTask": { context, request, responder in
                let parameters = try request.decodeParameters(AppInterface.CompleteParameters.self)
                guard let result = TaskResult(rawValue: parameters.result) else {
                    throw VarlinkError.invalidParameter("result", description: "must be newData, noData or failed")
                }
                let (id, pid) = try engine.requireApp(context)
                let actions = try engine.appCall { () throws(CoreError) in
                    try engine.core.completeTask(id, pid: pid, run: parameters.run, result: result, at: engine.now)
                }
                engine.apply(actions)
                responder.reply()
            },
        ]
    }
}
