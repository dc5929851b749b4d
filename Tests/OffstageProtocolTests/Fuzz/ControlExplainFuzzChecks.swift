import Foundation
import OffstageCore

@testable import OffstageProtocol

/// The properties every input of the `control-explain` fuzz target must keep (SPEC SCH-6, SCH-8, SCH-9, SET-1, SET-3,
/// §11).
/// An input is one Varlink message, as the CLI's call of `io.offstage.Control`'s scheduling methods would be (the
/// device's conditions, the task list, explain and its history, and the debug commands that run, expire or cancel a
/// task or fire a fetch, what each app used, and a memory warning by hand); it goes the way `ControlService` takes it: the codec, the wire parameters, their conversion
/// (the app id, the checked `since`, the conditions to override), the core — in each of ``InterfaceFuzz/cores``. The
/// history is answered from the records the core's own open waits close into, as the store would hold them.
///
/// A refusal is one of the errors Control declares, with a message and a fix, and changes nothing; an accepted call
/// leaves state that can be saved and answers with a reply that can be sent (every number finite).
enum ControlExplainFuzzChecks {
    typealias Outcome = InterfaceFuzz.Outcome
    typealias Violation = InterfaceFuzz.Violation

    static let declared = InterfaceFuzz.declaredErrors(ControlInterface.definition)
    /// The methods this target takes; Control's others (install, open, settings, the log) are other targets'.
    static let methods: Set<String> = [
        ControlInterface.Method.getDevice, ControlInterface.Method.setDevice, ControlInterface.Method.tasks,
        ControlInterface.Method.explain, ControlInterface.Method.explainHistory, ControlInterface.Method.runTask,
        ControlInterface.Method.expireTask, ControlInterface.Method.cancelTask, ControlInterface.Method.fetch,
        ControlInterface.Method.usage, ControlInterface.Method.memoryWarning,
    ]

    @discardableResult
    static func check(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        try InterfaceFuzz.check(bytes, of: ControlInterface.name, methods: methods) { call, core, now throws(Violation) in
            try check(call, in: core, at: now)
        }
    }

    private static func check(_ call: VarlinkReceivedCall, in start: OffstageCore, at now: Instant) throws(Violation) -> Outcome {
        let method = call.header.method
        func run(_ body: (inout OffstageCore) throws -> Void) throws(Violation) -> Outcome {
            try InterfaceFuzz.run(method, in: start, allowed: declared, body)
        }
        switch method {
        case ControlInterface.Method.getDevice:
            return try InterfaceFuzz.parameters(call, as: VarlinkEmpty.self) == nil ? .refusedParameters : .accepted
        case ControlInterface.Method.setDevice:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ControlInterface.SetDeviceParameters.self) else {
                return .refusedParameters
            }
            let overrides: ConditionOverrides
            do throws(VarlinkError) {
                overrides = try parameters.overrides(applyingTo: start.device.overrides)
            } catch {
                return try InterfaceFuzz.refusedParameter(error, of: method)
            }
            // The time zone is the daemon's to check against the machine's zoneinfo; the rest is the core's.
            return try run { core in
                _ = try core.setConditionOverrides(overrides, at: now)
                if let level = parameters.batteryLevel, !(0...100).contains(level) {
                    throw Violation("a battery level of \(level) % was accepted")
                }
                guard core.device.overrides == overrides else { throw Violation("the overrides are not the ones set") }
                if let lowPower = parameters.lowPowerMode {
                    var settings = core.device.settings
                    settings.lowPowerMode = lowPower
                    _ = core.setDeviceSettings(settings, at: now)
                }
                try InterfaceFuzz.reply(ControlInterface.DeviceReply(
                    conditions: .init(core.conditions(at: now)), machine: .init(core.device.machine),
                    overrides: .init(core.device.overrides), timeZone: core.device.settings.timeZone), of: method)
            }
        case ControlInterface.Method.tasks:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ControlInterface.TasksParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let id = try parameters.app.map { text throws(CoreError) in try InterfaceFuzz.appID(text) }
                let tasks = try core.tasks(of: id, at: now)
                try InterfaceFuzz.reply(ControlInterface.TasksReply(tasks: tasks.map(ControlInterface.TaskMessage.init)), of: method)
            }
        case ControlInterface.Method.explain:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ControlInterface.TaskParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let id = try InterfaceFuzz.appID(parameters.app)
                let tasks = try core.explain(id, identifier: parameters.identifier, at: now)
                let transfers = parameters.identifier != nil ? [] : try core.explainTransfers(id, at: now)
                let status = core.status(of: id, at: now)
                if let identifier = parameters.identifier, tasks.contains(where: { $0.identifier != identifier }) {
                    throw Violation("explain of \(identifier.debugDescription) told of other tasks")
                }
                try InterfaceFuzz.reply(ControlInterface.ExplainReply(
                    tasks: tasks.map(ControlInterface.TaskMessage.init),
                    transfers: transfers.map(ControlInterface.TransferExplanationMessage.init),
                    conditions: ControlInterface.Conditions(core.conditions(at: now)),
                    modeHolds: status?.modeHolds.map(\.description) ?? [], suspendedBecause: status?.suspendedBecause), of: method)
            }
        case ControlInterface.Method.explainHistory:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ControlInterface.ExplainHistoryParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let id = try InterfaceFuzz.appID(parameters.app)
                let since = try parameters.since.map { seconds throws(CoreError) in
                    try CoreError.checking { () throws(NumberOutOfRange) in
                        try CheckedNumber.instant(secondsSinceEpoch: seconds, field: "since")
                    }
                } ?? now - .seconds(86_400)
                try core.validateHistoryQuery(id, identifier: parameters.identifier, since: since, at: now)
                var history = core.history
                let records = history.stopAll(at: now).filter { $0.app == id }
                let reports = TaskHistoryReport.reports(
                    waits: records.compactMap { if case .wait(let wait) = $0 { wait } else { nil } },
                    runs: records.compactMap { if case .run(let run) = $0 { run } else { nil } },
                    identifier: parameters.identifier, from: since, to: now)
                let window = now.secondsSinceEpoch - since.secondsSinceEpoch
                for report in reports where !(report.waited.isFinite && report.waited >= 0 && report.waited <= window + 1e-6) {
                    throw Violation("\(report.identifier) waited \(report.waited) s in a window of \(window) s")
                }
                try InterfaceFuzz.reply(ControlInterface.ExplainHistoryReply(
                    app: id.rawValue, from: since.secondsSinceEpoch, to: now.secondsSinceEpoch, keptSeconds: 86_400 * 7,
                    tasks: reports.map { ControlInterface.TaskHistoryMessage($0, now: now) }), of: method)
            }
        case ControlInterface.Method.usage:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ControlInterface.UsageParameters.self) else {
                return .refusedParameters
            }
            return try run { core in try usage(parameters, core, now) }
        case ControlInterface.Method.runTask, ControlInterface.Method.expireTask, ControlInterface.Method.cancelTask:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ControlInterface.TaskParameters.self) else {
                return .refusedParameters
            }
            guard let identifier = parameters.identifier, !identifier.isEmpty else { return .refusedParameters }
            return try run { core in
                let id = try InterfaceFuzz.appID(parameters.app)
                switch method {
                case ControlInterface.Method.runTask: _ = try core.runTaskNow(id, identifier: identifier, at: now)
                case ControlInterface.Method.expireTask: _ = try core.expireTaskNow(id, identifier: identifier, at: now)
                default:
                    let (message, _) = try core.cancelContinuedTask(id, identifier: identifier, at: now)
                    guard !message.isEmpty else { throw Violation("CancelTask said nothing") }
                }
            }
        case ControlInterface.Method.fetch:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ControlInterface.AppParameters.self) else {
                return .refusedParameters
            }
            return try run { core in _ = try core.fetchNow(try InterfaceFuzz.appID(parameters.id), at: now) }
        case ControlInterface.Method.memoryWarning:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ControlInterface.MemoryWarningParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let app = try parameters.app.map { text throws(CoreError) in try InterfaceFuzz.appID(text) }
                let (warned, _) = try core.simulateMemoryWarning(app, at: now)
                // A warning by hand is not pressure: nothing is ended for it.
                guard core.memory.episode == nil else { throw Violation("a memory warning by hand began a memory episode") }
                if app != nil, warned != 1 { throw Violation("warning one running app warned \(warned)") }
            }
        default:
            return .notACall
        }
    }

    /// `Usage`: the window the core says, and a reply made of what the core's contexts counted up to now (as the
    /// daemon's ledger would, with no counters read).
    private static func usage(_ parameters: ControlInterface.UsageParameters, _ core: OffstageCore, _ now: Instant) throws {
        let id = try parameters.app.map { text throws(CoreError) in try InterfaceFuzz.appID(text) }
        let since = try parameters.since.map { seconds throws(CoreError) in
            try CoreError.checking { () throws(NumberOutOfRange) in
                try CheckedNumber.instant(secondsSinceEpoch: seconds, field: "since")
            }
        }
        let window = try core.usageWindow(id, since: since, at: now)
        let today = core.localDay(now)
        guard window.from <= now, window.firstDay <= today, window.firstDay == core.localDay(window.from) else {
            throw Violation("the window from \(window.from) (day \(window.firstDay)) does not end at now (day \(today))")
        }
        if since == nil, window.firstDay != today - OffstageCore.defaultUsageDays + 1 {
            throw Violation("the default window starts on day \(window.firstDay), not \(OffstageCore.defaultUsageDays) days back")
        }
        var ledger = UsageLedger()
        for (app, context) in core.usage.contexts where id == nil || app == id {
            ledger.apply(UsageChange(at: context.since, contexts: [app: context]))
        }
        ledger.readOpen(ledger.openApps, at: now, readings: [:])
        let (figures, _) = ledger.take()
        for (key, value) in figures where value.seconds < 0 || !value.seconds.isFinite || value.wakeUps < 0 {
            throw Violation("\(key.app) counted \(value.seconds) s and \(value.wakeUps) wake-ups")
        }
        let apps = (id.map { [$0] } ?? core.apps.keys.sorted()).compactMap { app in
            core.apps[app].map { ControlInterface.UsageApp(app, $0.app.settings, state: $0.state, memoryBytes: nil) }
        }
        try InterfaceFuzz.reply(ControlInterface.UsageReply(
            from: window.from.secondsSinceEpoch, to: now.secondsSinceEpoch, daysKept: 31, bytesCounted: "enforced",
            rows: figures.sorted { $0.key < $1.key }.map { ControlInterface.UsageRow($0.key, $0.value) }, memory: [],
            apps: apps), of: ControlInterface.Method.usage)
    }
}
