import Foundation
import OffstageProtocol
import Synchronization
import Testing

@testable import Offstage

/// SPEC §5, the app's side of background transfers, against a stand-in daemon on a real Unix socket: what a session
/// sends (`OpenSession`, `CreateTask`), how it hears of its tasks (progress, each finished task once per process,
/// acknowledged after the delegate returned), the wake for a session's events (`CompleteEvents` with the run), and
/// how failures and refusals read.
@Suite("Background sessions (SPEC TR-1..6, the SDK)", .serialized)
@MainActor
struct BackgroundSessionTests {
    nonisolated static let identifier = "com.example.test.session"

    /// The stand-in daemon's tasks, which `Tasks` answers, and what `CreateTask` answers with.
    final class Tasks: Sendable {
        let listed = Mutex<[String]>([])
        func set(_ tasks: [String]) { listed.withLock { $0 = tasks } }
    }

    /// One task in the wire form.
    nonisolated static func task(
        _ id: Int, _ state: String, kind: String = "download", done: Int = 0, expected: Int? = 1000, file: String? = nil,
        status: Int? = nil, failure: String? = nil
    ) -> String {
        var fields = [
            #""id":\#(id)"#, #""session":"\#(identifier)""#, #""kind":"\#(kind)""#, #""url":"http://127.0.0.1:1/f\#(id).bin""#,
            #""state":"\#(state)""#, #""bytesDone":\#(done)"#, #""createdAt":1700000000"#,
        ]
        if let expected { fields.append(#""bytesExpected":\#(expected)"#) }
        if let file { fields.append(#""file":"\#(file)""#) }
        if let status { fields.append(#""httpStatus":\#(status)"#) }
        if let failure { fields.append(#""failure":\#(failure)"#) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// A stand-in daemon whose `Tasks` answers `tasks`, whose `CreateTask` answers a waiting task 50 (a download) or 51 (an upload)
    /// (or `createError`), and which answers every other call with nothing.
    static func daemon(_ tasks: Tasks, createError: String? = nil) throws -> FakeModesDaemon {
        try FakeModesDaemon { method, parameters in
            switch method {
            case TransfersInterface.Method.tasks:
                return #"{"parameters":{"tasks":["# + tasks.listed.withLock { $0 }.joined(separator: ",") + "]}}"
            case TransfersInterface.Method.createTask:
                if let createError { return createError }
                let kind = parameters["kind"] as? String ?? "download"
                return #"{"parameters":{"task":"# + task(kind == "upload" ? 51 : 50, "waiting", kind: kind, expected: nil) + "}}"
            default:
                return #"{"parameters":{}}"#
            }
        }
    }

    static func dispatch(_ daemon: FakeModesDaemon) -> TransferDispatch {
        TransferDispatch(link: DaemonLink(environment: ["OFFSTAGE_SOCKET": daemon.path]))
    }

    /// A session delegate that records what it heard, and how many acknowledgements the daemon had read at the time.
    final class Recorder: BackgroundSessionDelegate {
        let daemon: FakeModesDaemon
        var heard: [String] = []
        var errors: [Int: BackgroundTransferError] = [:]
        var acknowledgementsWhenHeard: [Int] = []
        var finishedEvents: (() -> Void)?
        init(_ daemon: FakeModesDaemon) { self.daemon = daemon }

        func urlSession(
            _ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didWriteData bytesWritten: Int64,
            totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
        ) {
            heard.append("progress \(downloadTask.taskIdentifier) +\(bytesWritten) \(totalBytesWritten)/\(totalBytesExpectedToWrite)")
        }

        func urlSession(_ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didFinishDownloadingTo location: URL) {
            heard.append("file \(downloadTask.taskIdentifier) \(location.path)")
            acknowledgementsWhenHeard.append(daemon.calls("Acknowledge").count)
        }

        func urlSession(_ session: BackgroundSession, task: BackgroundSessionTask, didCompleteWithError error: BackgroundTransferError?) {
            heard.append("complete \(task.taskIdentifier) \(error?.code.rawValue ?? "ok")")
            errors[task.taskIdentifier] = error
            acknowledgementsWhenHeard.append(daemon.calls("Acknowledge").count)
        }

        func urlSessionDidFinishEvents(forBackgroundURLSession session: BackgroundSession) {
            heard.append("finished events")
            finishedEvents?()
        }
    }

    /// Waits until the stand-in has read `count` calls of `method` (or 3 s passed), and returns their parameters.
    static func calls(_ daemon: FakeModesDaemon, _ method: String, count: Int) async throws -> [String] {
        for _ in 0..<300 where daemon.calls(method).count < count { try await Task.sleep(for: .milliseconds(10)) }
        return daemon.calls(method).map(\.parameters)
    }

    @Test("TR-3: a new session opens, fetches its tasks, reports progress, delivers each finished task once per process and acknowledges it after the delegate returned")
    func eventsOncePerProcess() async throws {
        let tasks = Tasks()
        tasks.set([
            Self.task(7, "completed", done: 1000, file: "/data/Transfers/7-f7.bin", status: 200),
            Self.task(8, "failed", failure: #"{"code":"http-status","status":404,"message":"the server answered 404"}"#),
            Self.task(9, "running", done: 100),
        ])
        let daemon = try Self.daemon(tasks)
        defer { daemon.close() }
        let dispatch = Self.dispatch(daemon)
        let recorder = Recorder(daemon)
        var configuration = BackgroundSessionConfiguration.background(withIdentifier: Self.identifier)
        configuration.isDiscretionary = true
        configuration.sessionSendsLaunchEvents = false
        configuration.allowsExpensiveNetworkAccess = false
        let session = BackgroundSession(configuration: configuration, delegate: recorder, dispatch: dispatch)
        await session.refresh().value
        #expect(
            daemon.calls.map(\.method).prefix(3)
                == [TransfersInterface.Method.openSession, TransfersInterface.Method.tasks, TransfersInterface.Method.acknowledge])
        #expect(
            daemon.calls("OpenSession").map(\.parameters)
                == [#"{"allowsMeteredNetwork":false,"discretionary":true,"identifier":"\#(Self.identifier)","sendsLaunchEvents":false}"#])
        #expect(
            recorder.heard == [
                "progress 7 +1000 1000/1000", "file 7 /data/Transfers/7-f7.bin", "complete 7 ok", "complete 8 http-status",
                "progress 9 +100 100/1000",
            ])
        #expect(recorder.acknowledgementsWhenHeard == [0, 0, 0], "acknowledged only after the delegate returned")
        #expect(daemon.calls("Acknowledge").map(\.parameters) == [#"{"ids":[7,8],"session":"\#(Self.identifier)"}"#])
        #expect(recorder.errors[8]?.httpStatus == 404)

        // The daemon gives the same events again (the acknowledgement was lost, or the daemon crashed): not delivered
        // again, acknowledged again. Progress moved on.
        tasks.set([
            Self.task(7, "completed", done: 1000, file: "/data/Transfers/7-f7.bin", status: 200),
            Self.task(8, "failed", failure: #"{"code":"http-status","status":404,"message":"the server answered 404"}"#),
            Self.task(9, "running", done: 600),
        ])
        await session.refresh().value
        #expect(recorder.heard.count == 6 && recorder.heard.last == "progress 9 +500 600/1000")
        #expect(daemon.calls("Acknowledge").count == 2)

        // A session recreated with the same identifier, in the same process, reconnects: it hears of task 9 finishing
        // but not of 7 and 8 again; the old session's delegate hears nothing more.
        tasks.set([
            Self.task(7, "completed", done: 1000, file: "/data/Transfers/7-f7.bin", status: 200),
            Self.task(9, "completed", done: 1000, file: "/data/Transfers/9-f9.bin", status: 200),
        ])
        let second = Recorder(daemon)
        let again = BackgroundSession(configuration: configuration, delegate: second, dispatch: dispatch)
        await again.refresh().value
        await session.refresh().value
        #expect(second.heard == ["progress 9 +400 1000/1000", "file 9 /data/Transfers/9-f9.bin", "complete 9 ok"])
        #expect(recorder.heard.count == 6)
        #expect(daemon.calls("Acknowledge").last?.parameters == #"{"ids":[7,9],"session":"\#(Self.identifier)"}"#)
        #expect(daemon.calls("OpenSession").count == 2, "the recreated session opened again")

        // Another process (a new dispatch) hears of unacknowledged events again.
        let third = Recorder(daemon)
        await BackgroundSession(configuration: configuration, delegate: third, dispatch: Self.dispatch(daemon)).refresh().value
        #expect(third.heard.filter { $0.hasPrefix("complete") } == ["complete 7 ok", "complete 9 ok"])
    }

    /// An app delegate that keeps the completion handler, recreates the session, and calls the handler when the
    /// session's events are delivered, as the platform's documentation shows.
    final class WakeHandler: ApplicationDelegate {
        let dispatch: TransferDispatch
        let recorder: Recorder
        var handled: [String] = []
        var session: BackgroundSession?
        init(dispatch: TransferDispatch, recorder: Recorder) {
            self.dispatch = dispatch
            self.recorder = recorder
        }

        func application(
            _ application: Application, handleEventsForBackgroundURLSession identifier: String,
            completionHandler: @escaping @Sendable () -> Void
        ) {
            handled.append(identifier)
            recorder.finishedEvents = {
                completionHandler()
                completionHandler()  // a second call is ignored
            }
            session = BackgroundSession(
                configuration: .background(withIdentifier: identifier), delegate: recorder, dispatch: dispatch)
        }
    }

    /// An app delegate without the handler: the default completes at once.
    final class Silent: ApplicationDelegate {}

    static func wake(run: UInt64?, id: UInt64 = 1) -> AppInterface.CallbackMessage {
        AppInterface.CallbackMessage(id: id, kind: "transferEvents", run: run, session: identifier)
    }

    @Test("TR-3: a wake for the session's events calls the app's handler once; the session recreated there delivers them, then did-finish-events; the completion handler sends CompleteEvents with the run, once")
    func wakeCompletesRun() async throws {
        let tasks = Tasks()
        tasks.set([Self.task(11, "completed", done: 1000, file: "/data/Transfers/11-f11.bin", status: 200)])
        let daemon = try Self.daemon(tasks)
        defer { daemon.close() }
        let dispatch = Self.dispatch(daemon)
        let recorder = Recorder(daemon)
        let app = WakeHandler(dispatch: dispatch, recorder: recorder)
        dispatch.receive(Self.wake(run: 42), application: .shared, delegate: app)
        dispatch.receive(Self.wake(run: 42, id: 2), application: .shared, delegate: app)  // sent again after a reconnect
        #expect(try await Self.calls(daemon, "CompleteEvents", count: 1) == [#"{"run":42}"#])
        #expect(app.handled == [Self.identifier])
        #expect(recorder.heard == ["progress 11 +1000 1000/1000", "file 11 /data/Transfers/11-f11.bin", "complete 11 ok", "finished events"])
        #expect(
            daemon.calls.map(\.method).filter { $0.hasPrefix(TransfersInterface.name) }
                == ["OpenSession", "Tasks", "Acknowledge", "CompleteEvents"].map { TransfersInterface.name + "." + $0 },
            "events acknowledged before the run completes")

        // A wake while the session is open: the open session delivers; a callback without a run only refreshes.
        tasks.set([Self.task(12, "failed", failure: #"{"code":"cancelled","message":"cancelled by hand"}"#)])
        dispatch.receive(Self.wake(run: nil, id: 3), application: .shared, delegate: app)
        try await Task.sleep(for: .milliseconds(100))
        await app.session?.refresh().value
        #expect(recorder.heard.suffix(1) == ["complete 12 cancelled"], "no did-finish-events without a wake")
        #expect(daemon.calls("CompleteEvents").count == 1)

        // The default handler completes at once.
        dispatch.receive(Self.wake(run: 43, id: 4), application: .shared, delegate: Silent())
        #expect(try await Self.calls(daemon, "CompleteEvents", count: 2) == [#"{"run":42}"#, #"{"run":43}"#])
    }

    @Test("TR-1: downloadTask and uploadTask send CreateTask with the URL, kind, method, file, filename, discretionary flag and earliest begin; the task runs once created")
    func createTaskParameters() async throws {
        let daemon = try Self.daemon(Tasks())
        defer { daemon.close() }
        let session = BackgroundSession(
            configuration: .background(withIdentifier: Self.identifier), delegate: Recorder(daemon), dispatch: Self.dispatch(daemon))
        #expect(
            daemon.calls("OpenSession").map(\.parameters)
                == [#"{"allowsMeteredNetwork":true,"discretionary":false,"identifier":"\#(Self.identifier)","sendsLaunchEvents":true}"#],
            "the platform's defaults")
        let download = try session.downloadTask(
            with: URL(string: "http://127.0.0.1:8/a.bin")!, earliestBeginDate: Date(timeIntervalSince1970: 1_800_000_000),
            discretionary: true, filename: "b.bin", headers: ["X-Token": "t"])
        #expect(download.taskIdentifier == 50 && download.state == .running && download.countOfBytesExpectedToReceive == -1)
        download.resume()  // harmless: created means running
        let upload = try session.uploadTask(
            with: URL(string: "http://127.0.0.1:8/upload/c.bin")!, fromFile: URL(fileURLWithPath: "/data/up/../c.bin"), method: "POST")
        #expect(upload.kind == .upload && upload.taskIdentifier == 51)
        #expect(
            daemon.calls("CreateTask").map(\.parameters) == [
                #"{"discretionary":true,"earliestBegin":1800000000,"filename":"b.bin","headers":[{"name":"X-Token","value":"t"}],"kind":"download","session":"\#(Self.identifier)","url":"http:\/\/127.0.0.1:8\/a.bin"}"#,
                #"{"file":"\/data\/c.bin","kind":"upload","method":"POST","session":"\#(Self.identifier)","url":"http:\/\/127.0.0.1:8\/upload\/c.bin"}"#,
            ])
        #expect(daemon.calls("ChangeTask").isEmpty, "resume of a running task sends nothing")
        download.suspend()
        #expect(download.state == .suspended)
        download.resume()
        download.cancel()
        #expect(download.state == .canceling)
        #expect(
            try await Self.calls(daemon, "ChangeTask", count: 3)
                == [#"{"change":"pause","id":50}"#, #"{"change":"resume","id":50}"#, #"{"change":"cancel","id":50}"#])
    }

    @Test("TR-4: a task's failure reads as its code, HTTP status and message; a refused call as the error's code, message and fix")
    func errorsMap() async throws {
        let failures: [(String, BackgroundTransferError.Code, Int?)] = [
            (#"{"code":"http-status","status":403,"message":"forbidden"}"#, .httpStatus, 403),
            (#"{"code":"bad-request","message":"scheme ftp"}"#, .badRequest, nil),
            (#"{"code":"force-quit","message":"the user force-quit the app"}"#, .forceQuit, nil),
            (#"{"code":"timed-out","message":"no byte moved for 7 days"}"#, .timedOut, nil),
            (#"{"code":"file","message":"no space"}"#, .file, nil),
            (#"{"code":"quantum","message":"new"}"#, .unknown, nil),
        ]
        for (json, code, status) in failures {
            let failure = try JSONDecoder().decode(TransfersInterface.FailureMessage.self, from: Data(json.utf8))
            let error = BackgroundTransferError(failure: failure)
            #expect(error.code == code && error.httpStatus == status, "\(json)")
            #expect(error.message.contains(failure.message))
        }
        let tasks = Tasks()
        tasks.set([Self.task(21, "failed", failure: #"{"code":"http-status","status":500,"message":"gave up"}"#)])
        let daemon = try Self.daemon(
            tasks,
            createError: #"{"error":"io.offstage.Transfers.TooManyPendingRequests","parameters":{"message":"'app' already has 1000 unfinished transfers","fix":"wait"}}"#)
        defer { daemon.close() }
        let recorder = Recorder(daemon)
        let session = BackgroundSession(
            configuration: .background(withIdentifier: Self.identifier), delegate: recorder, dispatch: Self.dispatch(daemon))
        await session.refresh().value
        #expect(recorder.errors[21]?.code == .httpStatus && recorder.errors[21]?.httpStatus == 500)
        #expect(recorder.errors[21]?.description == "http-status (500): gave up; fix: check the URL and what the server answers for it")
        do throws(BackgroundTransferError) {
            try session.downloadTask(with: URL(string: "http://127.0.0.1:8/a.bin")!)
            Issue.record("the refusal is thrown")
        } catch {
            #expect(error.code == .tooManyTasks && error.message.contains("1000 unfinished") && error.fix == "wait")
            #expect(BackgroundTransferError.Code.tooManyTasks ~= error)
        }
        // No daemon at all.
        let nowhere = TransferDispatch(link: DaemonLink(environment: ["OFFSTAGE_SOCKET": "/nonexistent/offstaged.sock"]))
        let lonely = BackgroundSession(configuration: .background(withIdentifier: "x"), delegate: nil, dispatch: nowhere)
        #expect(throws: BackgroundTransferError.self) { try lonely.downloadTask(with: URL(string: "http://127.0.0.1:8/a.bin")!) }
        do throws(BackgroundTransferError) {
            try lonely.downloadTask(with: URL(string: "http://127.0.0.1:8/a.bin")!)
        } catch {
            #expect(error.code == .unavailable)
        }
    }
}
