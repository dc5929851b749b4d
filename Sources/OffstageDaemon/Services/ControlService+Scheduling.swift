import OffstageCore
import OffstageProtocol

/// `io.offstage.Control`: device conditions, the scheduler's plan and its debug commands (SPEC SCH-6, SCH-8, SCH-9,
/// SET-1).
extension ControlService {
    var schedulingMethods: [String: VarlinkMethodHandler] {
        [
            "GetDevice": { context, _, responder in
                try engine.requireUser(context)
                responder.reply(engine.deviceReply())
            },
            "SetDevice": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.SetDeviceParameters.self)
                try engine.setDevice(parameters)
                responder.reply(engine.deviceReply())
            },
            "Tasks": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.TasksParameters.self)
                let id = try parameters.app.map { text throws(VarlinkError) in try engine.appID(text) }
                let tasks = try engine.query { () throws(CoreError) in try engine.core.tasks(of: id, at: engine.now) }
                responder.reply(ControlInterface.TasksReply(tasks: tasks.map(ControlInterface.TaskMessage.init)))
            },
            "Explain": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.TaskParameters.self)
                let id = try engine.appID(parameters.app)
                let now = engine.now
                let tasks = try engine.query { () throws(CoreError) in
                    try engine.core.explain(id, identifier: parameters.identifier, at: now)
                }
                let transfers = parameters.identifier != nil ? [] : try engine.query { () throws(CoreError) in
                    try engine.core.explainTransfers(id, at: now)
                }
                let status = engine.core.status(of: id, at: now)
                responder.reply(ControlInterface.ExplainReply(
                    tasks: tasks.map(ControlInterface.TaskMessage.init),
                    transfers: transfers.map(ControlInterface.TransferExplanationMessage.init),
                    conditions: ControlInterface.Conditions(engine.core.conditions(at: now)),
                    modeHolds: status?.modeHolds.map(\.description) ?? [], suspendedBecause: status?.suspendedBecause))
            },
            "ExplainHistory": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.ExplainHistoryParameters.self)
                try engine.explainHistory(parameters, responder: responder)
            },
            "Usage": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.UsageParameters.self)
                try engine.usageReport(parameters, responder: responder)
            },
            "RunTask": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.TaskParameters.self)
                let id = try engine.appID(parameters.app)
                let identifier = try engine.requireIdentifier(parameters.identifier)
                try engine.control { () throws(CoreError) in
                    try engine.core.runTaskNow(id, identifier: identifier, at: engine.now)
                }
                responder.reply()
            },
            "ExpireTask": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.TaskParameters.self)
                let id = try engine.appID(parameters.app)
                let identifier = try engine.requireIdentifier(parameters.identifier)
                try engine.control { () throws(CoreError) in
                    try engine.core.expireTaskNow(id, identifier: identifier, at: engine.now)
                }
                responder.reply()
            },
            "CancelTask": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.TaskParameters.self)
                let id = try engine.appID(parameters.app)
                let identifier = try engine.requireIdentifier(parameters.identifier)
                var message = ""
                try engine.control { () throws(CoreError) in
                    let (said, actions) = try engine.core.cancelContinuedTask(id, identifier: identifier, at: engine.now)
                    message = said
                    return actions
                }
                responder.reply(ControlInterface.CancelTaskReply(message: message))
            },
            "MemoryWarning": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ControlInterface.MemoryWarningParameters.self)
                let id = try parameters.app.map { app throws(VarlinkError) in try engine.appID(app) }
                var warned = 0
                try engine.control { () throws(CoreError) in
                    let (count, actions) = try engine.core.simulateMemoryWarning(id, at: engine.now)
                    warned = count
                    return actions
                }
                responder.reply(ControlInterface.MemoryWarningReply(warned: warned))
            },
            "Fetch": { context, request, responder in
                try engine.requireUser(context)
                let id = try engine.appID(request.decodeParameters(ControlInterface.AppParameters.self).id)
                try engine.control { () throws(CoreError) in try engine.core.fetchNow(id, at: engine.now) }
                responder.reply()
            },
        ]
    }
}

extension DaemonEngine {
    /// Runs a core query, or answers with the core's error.
    func query<Result>(_ body: () throws(CoreError) -> Result) throws(VarlinkError) -> Result {
        do {
            return try body()
        } catch {
            throw error.varlink(in: ControlInterface.name)
        }
    }

    func requireIdentifier(_ identifier: String?) throws(VarlinkError) -> String {
        guard let identifier, !identifier.isEmpty else {
            throw VarlinkError.invalidParameter("identifier", description: "name the task identifier, e.g. com.example.refresh")
        }
        return identifier
    }

    func deviceReply() -> ControlInterface.DeviceReply {
        ControlInterface.DeviceReply(
            conditions: .init(core.conditions(at: now)), machine: .init(core.device.machine),
            overrides: .init(core.device.overrides), timeZone: core.device.settings.timeZone)
    }

    /// `offstage device`: overrides, cleared overrides, low power mode and the time zone — all or nothing.
    func setDevice(_ parameters: ControlInterface.SetDeviceParameters) throws(VarlinkError) {
        let timeZone = try parameters.timeZone.map { name throws(VarlinkError) in try validatedTimeZone(name) }
        let overrides = try parameters.overrides(applyingTo: core.device.overrides)
        if core.memory.episode != nil || (overrides.memoryPressure ?? .normal) > .normal { noteAppMemory() }
        try control { () throws(CoreError) in try core.setConditionOverrides(overrides, at: now) }
        var settings = core.device.settings
        if let lowPower = parameters.lowPowerMode { settings.lowPowerMode = lowPower }
        if let timeZone { settings.timeZone = timeZone }
        if settings != core.device.settings { apply(core.setDeviceSettings(settings, at: now)) }
    }
}
