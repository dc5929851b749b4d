import Foundation
import OffstageCore

@testable import OffstageProtocol

/// The properties every input of the `continued-processing` fuzz target must keep (SPEC SCH-11, §11: malformed input
/// gets a clear error and changes nothing). An input is one Varlink message, as an app's `io.offstage.App.SubmitTask`
/// (a continued-processing request: title, subtitle, strategy) or `io.offstage.App.ReportTaskProgress` call would be;
/// it goes the way the daemon takes it (the codec, the wire parameters, `TaskRequestMessage.request(submittedAt:)`,
/// the core) into two cores: one with every slot free, one with both slots taken (one by the other app, one by the
/// app's own run ``busyRun``) and one request of the app's queued.
///
/// Compiled twice, like `NotificationFuzzChecks.swift`: into this test target
/// (`ContinuedProcessingFuzzRegressionTests`) and by `scripts/fuzz` next to
/// `Fuzz/Targets/ContinuedProcessingFuzz.swift` (with `InterfaceFuzzSupport.swift`, whose `Violation` and `Outcome` it
/// shares). It imports only Foundation and the modules under test.
enum ContinuedProcessingFuzzChecks {
    /// A property that did not hold, and how far an input went, in the core where it went furthest (as the interface
    /// targets count them: not a call, or not one of the two methods; InvalidParameter naming a field; refused with a
    /// clear error changing nothing; accepted).
    typealias Violation = InterfaceFuzz.Violation
    typealias Outcome = InterfaceFuzz.Outcome

    static let app: AppID = "com.example.fuzz"
    static let other: AppID = "com.example.other"
    static let pid: Int32 = 4242
    static let now = Instant(secondsSinceEpoch: 1_800_000_000.125)
    /// The app's running task in the busy core (its run number is the one inputs give to report progress).
    static let busyIdentifier = "com.example.fuzz.export.running"

    /// The two cores every input goes to, and the run number of the app's running task in the busy one.
    static let cores: (free: OffstageCore, busy: OffstageCore, busyRun: UInt64) = {
        var core = OffstageCore()
        for (id, pid) in [(other, pid + 1), (app, pid)] {
            let manifest = Manifest(id: id, executable: "Fuzz", permittedTaskIdentifiers: ["\(id).export.*", "\(id).refresh"])
            core.restore(InstalledApp(manifest: manifest, bundlePath: "/b", installedAt: now, settings: .init()), durable: AppDurableState())
            _ = core.adopt(id, pid: pid, at: now)
        }
        _ = try! core.open(app, at: now)
        let free = core
        func submit(_ id: AppID, _ pid: Int32, _ identifier: String, _ title: String) {
            _ = try! core.open(id, at: now)
            let details = ContinuedTaskDetails(title: title, subtitle: "3 of 9", strategy: .queue)
            _ = try! core.submitTask(id, pid: pid, request: TaskRequest(identifier: identifier, kind: .continued, submittedAt: now, continued: details), at: now)
        }
        submit(other, pid + 1, "com.example.other.export.1", "Syncing")
        submit(app, pid, busyIdentifier, "Exporting 120 photos")
        submit(app, pid, "com.example.fuzz.export.queued", "Exporting 3 videos")
        let run = core.apps[app]!.process!.runs.first { $0.request.identifier == busyIdentifier }!.id
        return (free, core, run)
    }()

    @discardableResult
    static func check(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        guard let call = try? VarlinkCodec.decodeCall(Data(bytes)),
            [AppInterface.Method.submitTask, AppInterface.Method.reportTaskProgress].contains(call.header.method)
        else { return .notACall }
        return max(try check(call, in: cores.free), try check(call, in: cores.busy))
    }

    private static func check(_ call: VarlinkReceivedCall, in start: OffstageCore) throws(Violation) -> Outcome {
        var core = start
        let actions: [CoreAction]
        var model: (field: String, problem: String)?
        var reportedRun: UInt64?
        do {
            if call.header.method == AppInterface.Method.submitTask {
                let message: AppInterface.TaskRequestMessage
                do throws(VarlinkError) {
                    message = try call.decodeParameters(as: AppInterface.SubmitParameters.self).request
                } catch {
                    return try refusedParameters(error)
                }
                let request: TaskRequest
                switch message.request(submittedAt: now) {
                case .success(let value): request = value
                case .failure(let field):
                    let fields = ["kind", "title", "strategy", "earliestBegin"]
                    guard fields.contains(field.name), !field.description.isEmpty else {
                        throw Violation("the request refused naming \(field.name.debugDescription): \(field.description)")
                    }
                    return .refusedParameters
                }
                model = request.kind == .continued ? textProblem(request.continued!.title, "title", required: true)
                    ?? textProblem(request.continued!.subtitle, "subtitle", required: false) : nil
                actions = try core.submitTask(app, pid: pid, request: request, at: now)
                if request.kind == .continued { try checkSubmitted(core, start, request, actions) }
            } else {
                let progress: AppInterface.ProgressParameters
                do throws(VarlinkError) {
                    progress = try call.decodeParameters(as: AppInterface.ProgressParameters.self)
                } catch {
                    return try refusedParameters(error)
                }
                model = progress.completed < 0 || progress.total < 0 ? ("progress", "a negative count")
                    : progress.title.flatMap { textProblem($0, "title", required: true) }
                    ?? progress.subtitle.flatMap { textProblem($0, "subtitle", required: false) }
                reportedRun = progress.run
                actions = try core.reportTaskProgress(
                    app, pid: pid, run: progress.run, completed: progress.completed, total: progress.total, title: progress.title,
                    subtitle: progress.subtitle, at: now)
                try checkReported(core, start, progress, actions)
            }
        } catch let violation as Violation {
            throw violation
        } catch let error as CoreError {
            // A report of a run this process was never handed is NoSuchTask (decision 0049); of one that ended, harmless.
            if error.code == .noSuchTask, let run = reportedRun {
                let process = start.apps[app]?.process
                guard process?.runs.contains(where: { $0.id == run }) != true, process?.recentRuns.contains(run) != true,
                    !error.message.isEmpty, !error.fix.isEmpty, core.apps == start.apps
                else { throw Violation("a report of run \(run), which the app was handed, refused as \(error)") }
                return .refused
            }
            let allowed: [CoreError.Code] = [.invalidArgument, .notPermitted, .unavailable, .tooManyPendingRequests]
            guard allowed.contains(error.code), !error.message.isEmpty, !error.fix.isEmpty else {
                throw Violation("\(call.header.method) refused with \(error.code), or without a message or a fix: \(error)")
            }
            // The core reads the identifier first: a bad one is named before the title.
            if let model, !error.message.hasPrefix(model.field), !error.message.hasPrefix("task identifier") {
                throw Violation("\(call.header.method) with \(model.problem) in its \(model.field) refused, not naming it: \(error.message)")
            }
            guard core.apps == start.apps, core.device == start.device else {
                throw Violation("a refused \(call.header.method) changed the core")
            }
            return .refused
        } catch {
            throw Violation("\(call.header.method) threw \(error)")
        }
        if let model { throw Violation("\(call.header.method) accepted with \(model.problem) in its \(model.field)") }
        try checkSlots(core)
        _ = actions
        return .accepted
    }

    private static func refusedParameters(_ error: VarlinkError) throws(Violation) -> Outcome {
        guard error.name == VarlinkError.Name.invalidParameter, let named = error.stringParameter("parameter"), !named.isEmpty else {
            throw Violation("undecodable parameters refused as \(error), not InvalidParameter naming one")
        }
        return .refusedParameters
    }

    /// What is wrong with a title or subtitle by SCH-11's rule, written apart from the core's: one line the user can
    /// read, at most 256 bytes, not blank if required.
    static func textProblem(_ text: String, _ field: String, required: Bool) -> (field: String, problem: String)? {
        if required && text.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) { return (field, "nothing but blanks") }
        if text.utf8.count > 256 { return (field, "\(text.utf8.count) bytes") }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) { return (field, "a control character") }
        return nil
    }

    /// An accepted continued-processing request runs, or waits in the queue (strategy queue only), with its title and
    /// subtitle as given; a queued one is saved.
    private static func checkSubmitted(
        _ core: OffstageCore, _ start: OffstageCore, _ request: TaskRequest, _ actions: [CoreAction]
    ) throws(Violation) {
        let details = request.continued!
        let entry = core.apps[app]!
        let run = entry.process?.runs.first { $0.request.identifier == request.identifier && $0.progress != nil }
        let queued = entry.durable.schedule.requests[request.identifier]
        if let run, let progress = run.progress, run.startedAt == now, start.apps[app]!.process!.runs.allSatisfy({ $0.id != run.id }) {
            guard queued == nil, progress.title == details.title, progress.subtitle == details.subtitle, progress.completed == 0 else {
                throw Violation("the started task shows \(progress), not the request's title and subtitle, or is also queued")
            }
        } else if let queued {
            guard details.strategy == .queue, queued.kind == .continued, queued.continued == details, queued.submittedAt == now,
                actions.contains(.saveApp(app))
            else { throw Violation("the queued request is \(queued), not the request as given, saved (strategy \(details.strategy))") }
        } else {
            throw Violation("an accepted request is neither running nor queued")
        }
    }

    /// An accepted report of the app's running task is what the task shows now and the last thing the user was shown
    /// of it; a report of any other run changes nothing.
    private static func checkReported(
        _ core: OffstageCore, _ start: OffstageCore, _ report: AppInterface.ProgressParameters, _ actions: [CoreAction]
    ) throws(Violation) {
        guard let run = core.apps[app]?.process?.runs.first(where: { $0.id == report.run }), let progress = run.progress else {
            guard core.apps == start.apps else { throw Violation("a report of run \(report.run), not running, changed the core") }
            return
        }
        let old = start.apps[app]!.process!.runs.first { $0.id == report.run }!.progress!
        guard progress.completed == report.completed, progress.total == report.total, progress.title == report.title ?? old.title,
            progress.subtitle == report.subtitle ?? old.subtitle, progress.reportedAt == now
        else { throw Violation("after the report the task shows \(progress)") }
        let fraction = progress.fraction
        guard fraction.isFinite, (0...1).contains(fraction), !progress.description.isEmpty else {
            throw Violation("progress \(progress.completed) of \(progress.total) is the fraction \(fraction)")
        }
        let shown = actions.compactMap { action -> ContinuedTaskView? in
            if case .continuedProgress(app, run: report.run, let view) = action { view } else { nil }
        }
        guard let last = shown.last, last.completed == report.completed, last.total == report.total, last.title == progress.title,
            last.subtitle == progress.subtitle
        else { throw Violation("the user was last shown \(String(describing: shown.last)), not the report") }
        guard run.expirationSent || run.expiresAt > now else { throw Violation("the report did not renew the task's time") }
    }

    /// No more continued-processing tasks run than there are slots, and no app has more queued than it may.
    private static func checkSlots(_ core: OffstageCore) throws(Violation) {
        let limits = core.configuration.continuedProcessing
        let running = core.apps.values.flatMap { $0.process?.runs ?? [] }.filter { $0.progress != nil && !$0.expirationSent }
        guard running.count <= limits.slots else { throw Violation("\(running.count) continued-processing tasks run") }
        for entry in core.apps.values {
            let queued = entry.durable.schedule.requests.values.filter { $0.kind == .continued }.count
            guard queued <= limits.maximumQueuedPerApp else { throw Violation("\(entry.app.manifest.id) has \(queued) queued") }
        }
    }
}
