import Foundation
import OffstageCore

@testable import OffstageProtocol

/// What an accepted `CreateTask` must be, written apart from the core's own checks (SPEC TR-1, TR-6), and what the
/// transfer queue must be after any call: the second half of the `transfers` fuzz target's properties
/// (`TransfersFuzzChecks`). Compiled with it, in the test target and by `scripts/fuzz`.
enum TransfersFuzzModel {
    typealias Violation = TransfersFuzzChecks.Violation

    /// The created task is the request as asked, journaled, the calling app's only, in the session asked, with a
    /// usable URL, method, headers, file name and date.
    static func checkCreated(
        _ core: OffstageCore, _ task: TransferTask, _ parameters: TransfersInterface.CreateTaskParameters, _ actions: [CoreAction]
    ) throws(Violation) {
        let app = TransfersFuzzChecks.app
        guard let kept = core.transfers.tasks[task.id], kept.app == app, kept.session == parameters.session,
            kept.request == task.request, kept.state == .waiting || kept.state == .running
        else { throw Violation("the created task \(task.id) is not kept as the app's, waiting or running, in its session") }
        guard actions.contains(.transfer(.save(task))) else { throw Violation("the created task \(task.id) was not saved (TR-6)") }
        guard TransfersFuzzChecks.start.core.transfers.tasks[task.id] == nil else { throw Violation("task id \(task.id) reused") }
        let key = TransferSessionKey(app: app, identifier: parameters.session)
        guard core.transfers.tasks(in: key).contains(where: { $0.id == task.id }),
            core.transfers.tasks(of: app).contains(where: { $0.id == task.id })
        else { throw Violation("the created task \(task.id) is not listed for its app and session") }
        for other in core.transfers.sessions.keys where other.app != app {
            guard !core.transfers.tasks(in: other).contains(where: { $0.id == task.id }) else {
                throw Violation("the created task \(task.id) is listed in \(other)")
            }
        }
        guard !core.transfers.tasks(of: TransfersFuzzChecks.other).contains(where: { $0.id == task.id }) else {
            throw Violation("another app sees the created task \(task.id)")
        }
        let request = task.request
        guard request.kind.rawValue == parameters.kind, request.url == parameters.url else {
            throw Violation("the task's kind or URL is not the one asked")
        }
        if let problem = urlProblem(request.url) { throw Violation("accepted URL \(request.url.debugDescription): \(problem)") }
        let methods = request.kind == .download ? ["GET"] : ["PUT", "POST"]
        guard methods.contains(request.method), parameters.method == nil || parameters.method?.uppercased() == request.method else {
            throw Violation("accepted method \(request.method) for a \(request.kind)")
        }
        guard (request.kind == .upload) == (request.uploadFile.map { !$0.isEmpty } ?? false) else {
            throw Violation("an accepted \(request.kind) has upload file \(String(describing: request.uploadFile))")
        }
        let reserved: Set<String> = ["range", "if-range", "content-length", "host", "transfer-encoding", "connection"]
        for header in request.headers {
            guard !header.name.isEmpty, header.name.unicodeScalars.allSatisfy(isTokenScalar),
                !header.value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }),
                !reserved.contains(header.name.lowercased())
            else { throw Violation("accepted header \(header.name.debugDescription): \(header.value.debugDescription)") }
        }
        let name = request.filename
        guard !name.isEmpty, name.utf8.count <= 1_024, !name.hasPrefix("."), !name.contains("/"), !name.contains("\\"),
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw Violation("accepted file name \(name.debugDescription) could leave the app's folder or is unreadable") }
        let now = TransfersFuzzChecks.now
        if let earliest = request.earliestBegin {
            guard earliest <= now + .seconds(8 * 86_400), earliest >= now - .seconds(2 * 86_400) else {
                throw Violation("accepted earliest begin date \(earliest.secondsSinceEpoch), far from now")
            }
        }
        try TransfersFuzzChecks.roundTrip(TransfersInterface.CreateTaskReply(task: .init(task, file: nil, waitingFor: nil)))
    }

    /// A character that may appear in an HTTP header name (RFC 9110 `tchar`).
    static func isTokenScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
    }

    /// Why the engine could not use `url`: its own test (Foundation's `URL`, an http or https scheme, a host), the
    /// core's length limit, or spaces.
    static func urlProblem(_ text: String) -> String? {
        guard text.utf8.count <= 8_192 else { return "longer than 8 KiB" }
        guard !text.contains(where: { $0.isWhitespace || $0.isNewline }) else { return "has spaces" }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else { return "the engine cannot read it" }
        guard scheme == "http" || scheme == "https" else { return "the engine reads the scheme \(scheme)" }
        guard let host = url.host, !host.isEmpty else { return "the engine finds no host" }
        return nil
    }

    /// Whatever the call, the queue stays within its limits and its bytes within their bounds, and every session's
    /// tasks belong to its app.
    static func checkQueue(_ core: OffstageCore) throws(Violation) {
        let limits = core.transferLimits
        let tasks = core.transfers.tasks.values
        let running = tasks.filter { $0.state == .running }
        guard running.count <= limits.maximumRunning else { throw Violation("\(running.count) transfers running") }
        for app in Set(tasks.map(\.app)) {
            guard running.filter({ $0.app == app }).count <= limits.maximumRunningPerApp,
                tasks.filter({ $0.app == app && !$0.state.isFinished }).count <= limits.maximumTasksPerApp
            else { throw Violation("\(app) is over its limits of transfers") }
        }
        for task in tasks {
            guard task.bytesDone >= 0, task.bytesExpected.map({ $0 >= 0 && task.bytesDone <= $0 }) ?? true else {
                throw Violation("task \(task.id) has \(task.bytesDone) of \(String(describing: task.bytesExpected)) bytes")
            }
            guard core.transfers.sessions[TransferSessionKey(app: task.app, identifier: task.session)] != nil else {
                throw Violation("task \(task.id) is in no session of its app")
            }
        }
    }
}
