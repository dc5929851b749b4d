/// `io.offstage.TransfersControl`: what the user (the CLI) may see and do of every app's background transfers
/// (SPEC §5, CLI).
public enum TransfersControlInterface {
    /// The interface name.
    public static let name = "io.offstage.TransfersControl"

    /// The Varlink interface definition, served by `GetInterfaceDescription`.
    public static let definition = """
        # Every app's background transfers: what each is doing and why it waits; pause, resume and cancel by hand.
        interface io.offstage.TransfersControl

        # Why a task failed. code: http-status (status holds it), bad-request, cancelled, force-quit, timed-out, file.
        type Failure (
          code: string,
          status: ?int,
          message: string
        )

        # One task. state: waiting, running, paused, completed or failed; waitingFor: why a waiting task does not run
        # (each condition that holds it back, or that others have the slots); retryAt: when a failed attempt is tried
        # again; lastError: why the last attempt failed.
        type Transfer (
          app: string,
          session: string,
          id: int,
          kind: string,
          url: string,
          state: string,
          bytesDone: int,
          bytesExpected: ?int,
          discretionary: bool,
          attempts: int,
          waitingFor: []string,
          retryAt: ?float,
          lastError: ?string,
          httpStatus: ?int,
          failure: ?Failure,
          createdAt: float,
          finishedAt: ?float
        )

        # The transfers of one app, or of every app when app is null, oldest first.
        method List(app: ?string) -> (transfers: []Transfer)

        # Cancels, pauses or resumes a task by hand. change: cancel, pause or resume.
        method Change(id: int, change: string) -> ()

        # No such app or task.
        error NoSuchTask (message: string, fix: string)

        error AppNotInstalled (message: string, fix: string)

        error InvalidArgument (message: string, fix: string)
        """

    /// Full method names.
    public enum Method {
        public static let list = "io.offstage.TransfersControl.List"
        public static let change = "io.offstage.TransfersControl.Change"
    }

    /// One task as the CLI shows it.
    public struct TransferMessage: Codable, Hashable, Sendable {
        public var app: String
        public var session: String
        public var id: UInt64
        public var kind: String
        public var url: String
        public var state: String
        public var bytesDone: Int64
        public var bytesExpected: Int64?
        public var discretionary: Bool
        public var attempts: Int
        public var waitingFor: [String]
        public var retryAt: Double?
        public var lastError: String?
        public var httpStatus: Int?
        public var failure: TransfersInterface.FailureMessage?
        public var createdAt: Double
        public var finishedAt: Double?

        public init(
            app: String, session: String, id: UInt64, kind: String, url: String, state: String, bytesDone: Int64,
            bytesExpected: Int64?, discretionary: Bool, attempts: Int, waitingFor: [String], retryAt: Double?, lastError: String?,
            httpStatus: Int?, failure: TransfersInterface.FailureMessage?, createdAt: Double, finishedAt: Double?
        ) {
            self.app = app
            self.session = session
            self.id = id
            self.kind = kind
            self.url = url
            self.state = state
            self.bytesDone = bytesDone
            self.bytesExpected = bytesExpected
            self.discretionary = discretionary
            self.attempts = attempts
            self.waitingFor = waitingFor
            self.retryAt = retryAt
            self.lastError = lastError
            self.httpStatus = httpStatus
            self.failure = failure
            self.createdAt = createdAt
            self.finishedAt = finishedAt
        }
    }

    /// `List` parameters.
    public struct ListParameters: Codable, Hashable, Sendable {
        public var app: String?
        public init(app: String?) { self.app = app }
    }

    /// `List` reply.
    public struct ListReply: Codable, Hashable, Sendable {
        public var transfers: [TransferMessage]
        public init(transfers: [TransferMessage]) { self.transfers = transfers }
    }

    /// `Change` parameters.
    public struct ChangeParameters: Codable, Hashable, Sendable {
        public var id: UInt64
        public var change: String
        public init(id: UInt64, change: String) {
            self.id = id
            self.change = change
        }
    }
}
