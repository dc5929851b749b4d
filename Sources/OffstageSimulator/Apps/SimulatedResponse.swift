import Foundation
import OffstageCore

/// What the simulated network's server answers a background transfer's request to one URL (SPEC §5): a status and a
/// body, or no answer at all.
public struct SimulatedResponse: Sendable, Hashable {
    /// The status; a 2xx completes the transfer, any other ends the attempt as ``TransferHTTPStatus`` says.
    public var status: Int
    /// How many bytes the server sends: a download's file; what the transfer's time on the network is counted from.
    public var size: Int64
    /// The body itself, when the shell keeps bytes (the test kit writes a download's file from it, and an upload's
    /// answer is kept from it); nil in scripted simulations, which count bytes only.
    public var body: Data?
    /// The server's Retry-After, in seconds, for a status worth retrying.
    public var retryAfter: Double?
    /// Set when the server cannot be reached (a refused connection, a name that does not resolve): the attempt ends
    /// with this reason and is retried, as a connection error is.
    public var unreachable: String?

    /// The server answers `status` with `size` bytes (or `body`, whose size then counts).
    public init(status: Int = 200, size: Int64? = nil, body: Data? = nil, retryAfter: Double? = nil) {
        self.status = status
        self.size = size ?? Int64(body?.count ?? 0)
        self.body = body
        self.retryAfter = retryAfter
    }

    /// The server cannot be reached: every attempt ends with `reason` and is retried later.
    public static func unreachable(_ reason: String) -> SimulatedResponse {
        var response = SimulatedResponse(status: 0, size: 0)
        response.unreachable = reason
        return response
    }

    /// How an attempt of `task` that moved every byte ends with this answer; `limit` caps an upload's kept answer.
    func result(for task: TransferTask, limit: Int) -> TransferAttemptResult {
        if let unreachable { return .transient(unreachable, retryAfter: nil) }
        if let failure = TransferHTTPStatus.failure(status, retryAfter: retryAfter) { return failure }
        guard task.request.kind == .upload, let body, !body.isEmpty else { return .completed(status: status) }
        return .completed(
            status: status, responseBody: TransferResponseBody(body.prefix(limit), truncated: body.count > limit))
    }
}
