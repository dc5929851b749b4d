import Foundation
import OffstageCore

/// `io.offstage.Transfers`: what an app's process may do with background transfers (SPEC §5). The daemon knows the
/// calling app from the connection's peer credentials: an app sees, creates and changes only its own sessions and
/// tasks.
public enum TransfersInterface {
    /// The interface name.
    public static let name = "io.offstage.Transfers"

    /// The Varlink interface definition, served by `GetInterfaceDescription`.
    public static let definition = """
        # Background transfers (the platform's background URL session): downloads and uploads the daemon runs while
        # the app is suspended or not running. The daemon identifies the calling app from the connection's peer
        # credentials.
        interface io.offstage.Transfers

        # Why a task failed. code: http-status (status holds it), bad-request, cancelled, force-quit, timed-out, file.
        type Failure (
          code: string,
          status: ?int,
          message: string
        )

        # One task of one of the app's sessions. kind: download or upload; state: waiting, running, paused,
        # completed or failed. file: for a completed download, where its file is in the app's folder until the app
        # acknowledges the task (move it before). waitingFor: why a waiting task does not run, for people.
        # responseBody: for a completed upload whose server answered a body, that body in base64 (at most the
        # setting transfers.maximumResponseBodyBytes, 64 KiB by default); responseBodyTruncated: the server sent
        # more, and responseBody is its beginning.
        type Task (
          id: int,
          session: string,
          kind: string,
          url: string,
          state: string,
          bytesDone: int,
          bytesExpected: ?int,
          file: ?string,
          httpStatus: ?int,
          failure: ?Failure,
          waitingFor: ?string,
          createdAt: float,
          finishedAt: ?float,
          responseBody: ?string,
          responseBodyTruncated: ?bool
        )

        # One request header.
        type Header (
          name: string,
          value: string
        )

        # Opens (or reconfigures) the app's background session identifier. discretionary: its tasks wait for good
        # conditions (an unmetered network, a charger) while the app is not in front; sendsLaunchEvents: the app is
        # launched or resumed when all of the session's tasks have finished (default true); allowsMeteredNetwork
        # (default true).
        method OpenSession(identifier: string, discretionary: ?bool, sendsLaunchEvents: ?bool, allowsMeteredNetwork: ?bool) -> ()

        # Creates a task in the session. kind: download or upload. method: GET for a download, PUT (default) or
        # POST for an upload. file: the upload's file, inside the app's data folder; the daemon keeps its own link or
        # copy, so the app may change or delete it at once. filename: the name a finished download gets (the
        # URL's last path component when null). earliestBegin: seconds since the epoch. The task is journaled
        # before the reply.
        method CreateTask(
          session: string,
          kind: string,
          url: string,
          method: ?string,
          headers: ?[]Header,
          file: ?string,
          filename: ?string,
          discretionary: ?bool,
          earliestBegin: ?float
        ) -> (task: Task)

        # The session's tasks: the finished ones are its events (each until acknowledged), the others show progress.
        method Tasks(session: string) -> (tasks: []Task)

        # The app handled these finished tasks (its delegate returned): they are forgotten, with any downloaded file
        # the app left where it was given. Unfinished and unknown ids are ignored.
        method Acknowledge(session: string, ids: []int) -> ()

        # Cancels, pauses or resumes one of the app's tasks. change: cancel, pause or resume.
        method ChangeTask(id: int, change: string) -> ()

        # The app's handler of a session's events (the transferEvents callback with a run) called its completion
        # handler.
        method CompleteEvents(run: int) -> ()

        # The calling process is not an app the daemon knows.
        error NotAnApp (pid: int, message: string, fix: string)

        # The app has no process the daemon manages (it was not launched by the daemon or attached).
        error AppNotRunning (message: string, fix: string)

        # No such session or task of the calling app.
        error NoSuchTask (message: string, fix: string)

        # The app has as many unfinished tasks as it may.
        error TooManyPendingRequests (message: string, fix: string)

        error InvalidArgument (message: string, fix: string)
        """

    /// Full method names.
    public enum Method {
        public static let openSession = "io.offstage.Transfers.OpenSession"
        public static let createTask = "io.offstage.Transfers.CreateTask"
        public static let tasks = "io.offstage.Transfers.Tasks"
        public static let acknowledge = "io.offstage.Transfers.Acknowledge"
        public static let changeTask = "io.offstage.Transfers.ChangeTask"
        public static let completeEvents = "io.offstage.Transfers.CompleteEvents"
    }

    /// Why a task failed.
    public struct FailureMessage: Codable, Hashable, Sendable {
        public var code: String
        public var status: Int?
        public var message: String
        public init(code: String, status: Int?, message: String) {
            self.code = code
            self.status = status
            self.message = message
        }
        /// The wire form of a core failure.
        public init(_ failure: TransferFailure) { self.init(code: failure.code.rawValue, status: failure.status, message: failure.message) }
    }

    /// One task.
    public struct TaskMessage: Codable, Hashable, Sendable {
        public var id: UInt64
        public var session: String
        public var kind: String
        public var url: String
        public var state: String
        public var bytesDone: Int64
        public var bytesExpected: Int64?
        public var file: String?
        public var httpStatus: Int?
        public var failure: FailureMessage?
        public var waitingFor: String?
        public var createdAt: Double
        public var finishedAt: Double?
        /// A completed upload's response body, base64 (see ``responseBodyData``); nil when there was none.
        public var responseBody: String?
        /// True when the server's answer was longer than what `responseBody` holds.
        public var responseBodyTruncated: Bool?

        public init(
            id: UInt64, session: String, kind: String, url: String, state: String, bytesDone: Int64, bytesExpected: Int64?,
            file: String?, httpStatus: Int?, failure: FailureMessage?, waitingFor: String?, createdAt: Double, finishedAt: Double?,
            responseBody: String? = nil, responseBodyTruncated: Bool? = nil
        ) {
            self.id = id
            self.session = session
            self.kind = kind
            self.url = url
            self.state = state
            self.bytesDone = bytesDone
            self.bytesExpected = bytesExpected
            self.file = file
            self.httpStatus = httpStatus
            self.failure = failure
            self.waitingFor = waitingFor
            self.createdAt = createdAt
            self.finishedAt = finishedAt
            self.responseBody = responseBody
            self.responseBodyTruncated = responseBodyTruncated
        }

        /// The response body's bytes; nil when there was none or it is not valid base64.
        public var responseBodyData: Data? { responseBody.flatMap { Data(base64Encoded: $0) } }

        /// The wire form of a core task; `file` and `waitingFor` are the daemon's to say.
        public init(_ task: TransferTask, file: String?, waitingFor: String?) {
            self.init(
                id: task.id, session: task.session, kind: task.request.kind.rawValue, url: task.request.url,
                state: task.state.rawValue, bytesDone: task.bytesDone, bytesExpected: task.bytesExpected, file: file,
                httpStatus: task.httpStatus, failure: task.failure.map(FailureMessage.init), waitingFor: waitingFor,
                createdAt: task.createdAt.secondsSinceEpoch, finishedAt: task.finishedAt?.secondsSinceEpoch,
                responseBody: task.responseBody?.data.base64EncodedString(), responseBodyTruncated: task.responseBody.map(\.truncated))
        }
    }

    /// One request header.
    public struct HeaderMessage: Codable, Hashable, Sendable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// `OpenSession` parameters.
    public struct OpenSessionParameters: Codable, Hashable, Sendable {
        public var identifier: String
        public var discretionary: Bool?
        public var sendsLaunchEvents: Bool?
        public var allowsMeteredNetwork: Bool?
        public init(identifier: String, discretionary: Bool? = nil, sendsLaunchEvents: Bool? = nil, allowsMeteredNetwork: Bool? = nil) {
            self.identifier = identifier
            self.discretionary = discretionary
            self.sendsLaunchEvents = sendsLaunchEvents
            self.allowsMeteredNetwork = allowsMeteredNetwork
        }
    }

    /// `CreateTask` parameters.
    public struct CreateTaskParameters: Codable, Hashable, Sendable {
        public var session: String
        public var kind: String
        public var url: String
        public var method: String?
        public var headers: [HeaderMessage]?
        public var file: String?
        public var filename: String?
        public var discretionary: Bool?
        public var earliestBegin: Double?
        public init(
            session: String, kind: String, url: String, method: String? = nil, headers: [HeaderMessage]? = nil, file: String? = nil,
            filename: String? = nil, discretionary: Bool? = nil, earliestBegin: Double? = nil
        ) {
            self.session = session
            self.kind = kind
            self.url = url
            self.method = method
            self.headers = headers
            self.file = file
            self.filename = filename
            self.discretionary = discretionary
            self.earliestBegin = earliestBegin
        }
    }

    /// `CreateTask` reply.
    public struct CreateTaskReply: Codable, Hashable, Sendable {
        public var task: TaskMessage
        public init(task: TaskMessage) { self.task = task }
    }

    /// `Tasks` parameters.
    public struct TasksParameters: Codable, Hashable, Sendable {
        public var session: String
        public init(session: String) { self.session = session }
    }

    /// `Tasks` reply.
    public struct TasksReply: Codable, Hashable, Sendable {
        public var tasks: [TaskMessage]
        public init(tasks: [TaskMessage]) { self.tasks = tasks }
    }

    /// `Acknowledge` parameters.
    public struct AcknowledgeParameters: Codable, Hashable, Sendable {
        public var session: String
        public var ids: [UInt64]
        public init(session: String, ids: [UInt64]) {
            self.session = session
            self.ids = ids
        }
    }

    /// `ChangeTask` parameters.
    public struct ChangeTaskParameters: Codable, Hashable, Sendable {
        public var id: UInt64
        public var change: String
        public init(id: UInt64, change: String) {
            self.id = id
            self.change = change
        }
    }

    /// `CompleteEvents` parameters.
    public struct CompleteEventsParameters: Codable, Hashable, Sendable {
        public var run: UInt64
        public init(run: UInt64) { self.run = run }
    }
}
