import Foundation
import OffstageCore
import OffstageSimulator

/// What the test's server answers a background transfer's request (``TestDevice/respond(to:with:)``).
public struct ServerResponse: Sendable, Hashable {
    let simulated: SimulatedResponse

    /// 200 OK with `body`: a download's file, or an upload's answer.
    public static func ok(_ body: Data) -> ServerResponse { status(200, body: body) }

    /// 200 OK with `text` in UTF-8.
    public static func ok(_ text: String) -> ServerResponse { ok(Data(text.utf8)) }

    /// `code` with `body`. A 2xx completes the transfer; 408, 429 and 5xx end the attempt to be retried (after
    /// `retryAfter`, when the server asks for a wait), as the daemon retries them; any other status fails the task
    /// with it, and the app's delegate gets the status.
    public static func status(_ code: Int, body: Data = Data(), retryAfter: Duration? = nil) -> ServerResponse {
        ServerResponse(
            simulated: SimulatedResponse(
                status: code, body: body,
                retryAfter: retryAfter.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }))
    }

    /// The server cannot be reached (the connection is refused, its name does not resolve): every attempt ends with
    /// `reason` and is retried later, as a connection error is.
    public static func unreachable(_ reason: String = "the connection was refused") -> ServerResponse {
        ServerResponse(simulated: .unreachable(reason))
    }
}

extension TestDevice {
    /// From now on, the server of `url` answers background transfers' requests with `response`: a download gets its
    /// body as its file, an upload gets it as its answer (`urlSession(_:dataTask:didReceive:)`). Its bytes take
    /// their time on the network (``networkBytesPerSecond``). Requests already waiting for `url` get the answer now.
    ///
    /// A request to a URL the test gave no response for waits, in flight, as for a server that has not answered yet
    /// (``unansweredRequests`` lists them): a test decides when and how each transfer ends.
    ///
    /// - Throws: ``TestKitError/invalidArgument(_:)`` for an empty URL or a status outside 100...599 (nothing changes).
    public func respond(to url: String, with response: ServerResponse) async throws {
        guard !url.isEmpty else { throw TestKitError.invalidArgument("url is empty: give the URL the app's transfer asks for") }
        let status = response.simulated.status
        guard response.simulated.unreachable != nil || (100...599).contains(status) else {
            throw TestKitError.invalidArgument("status \(status): an HTTP status is 100...599")
        }
        host.with { state in
            state.simulation.transferResponses[url] = response.simulated
            state.simulation.answerWaitingTransfers(to: url)
        }
        try await runUntilIdle()
    }

    /// The URLs of the transfers whose request waits for the test to say what the server answers, one per request,
    /// in the tasks' order.
    public var unansweredRequests: [String] {
        host.with { state in
            state.simulation.core.transfers.tasks.values.sorted { $0.id < $1.id }
                .filter { $0.state == .running && state.simulation.transferResponses[$0.request.url] == nil }
                .map(\.request.url)
        }
    }

    /// How many bytes a second the network moves for each running transfer: 10 MB/s unless set.
    public var networkBytesPerSecond: Double {
        get { host.with { $0.simulation.transferBandwidth } }
        set { host.with { $0.simulation.transferBandwidth = max(newValue, 1) } }
    }

    /// The app's process is killed, as the kernel's out-of-memory killer or a crash ends it: no will-terminate, and
    /// nothing of its memory survives. What the system keeps for the app — its transfers, scheduled work,
    /// notifications — stays, and wakes a new process when it is due.
    ///
    /// - Throws: ``TestKitError/invalidArgument(_:)`` when the app is not running.
    public func kill(_ app: TestApp) async throws {
        let killed = host.with { state in
            guard let current = state.current, current.app == app.appID else { return false }
            state.simulation.externalExited(current.pid, status: .signaled(SIGKILL))
            return true
        }
        guard killed else { throw TestKitError.invalidArgument("'\(app.id)' is not running: there is no process to kill") }
        try await runUntilIdle()
    }
}

/// One of the app's background transfers, as the system has it (`offstage transfers`).
public struct TestTransfer: Sendable, Hashable, CustomStringConvertible {
    /// The task's identifier, as the app's `taskIdentifier`.
    public var id: Int
    /// The session it belongs to.
    public var session: String
    /// `download` or `upload`.
    public var kind: String
    /// The URL asked for.
    public var url: String
    /// `waiting`, `running`, `paused`, `completed` or `failed`.
    public var state: String
    /// Bytes moved so far.
    public var bytesDone: Int64
    /// How many attempts it made.
    public var attempts: Int
    /// The server's status, once it answered one.
    public var httpStatus: Int?
    /// Why it failed, or why its last attempt did.
    public var error: String?
    /// Why it waits, one line each (empty when it does not).
    public var waitingFor: [String]

    public var description: String {
        "\(kind) \(id) \(url): \(state)\(error.map { " (\($0))" } ?? "")"
            + (waitingFor.isEmpty ? "" : "; waits for \(waitingFor.joined(separator: ", "))")
    }
}

extension TestApp {
    /// The app's background transfers the system still has (finished ones until the app handled them), oldest first.
    public var transfers: [TestTransfer] {
        device.host.with { state in
            let now = state.simulation.now
            return state.simulation.core.transfers.tasks(of: appID).map { task in
                TestTransfer(
                    id: Int(task.id), session: task.session, kind: task.request.kind.rawValue, url: task.request.url,
                    state: task.state.rawValue, bytesDone: task.bytesDone, attempts: task.attempts, httpStatus: task.httpStatus,
                    error: task.failure?.message ?? task.lastError,
                    waitingFor: task.state == .waiting ? state.simulation.core.transferWaitingFor(task, at: now) : [])
            }
        }
    }
}
