import OffstageCore
import Testing

/// What a transfer makes of a server's status (SPEC TR-4): the same words in the daemon, the simulator and the kit.
@Suite("Transfers: what a server's status means")
struct TransferHTTPStatusTests {
    @Test("TR-4: 408, 429 and 5xx are retried, after the server's Retry-After; a 2xx ends nothing")
    func retriedStatuses() {
        #expect(TransferHTTPStatus.failure(200, retryAfter: nil) == nil)
        #expect(TransferHTTPStatus.failure(204, retryAfter: nil) == nil)
        #expect(TransferHTTPStatus.failure(503, retryAfter: 120) == .transient("the server answered 503 Service Unavailable", retryAfter: 120))
        #expect(TransferHTTPStatus.failure(429, retryAfter: nil) == .transient("the server answered 429 Too Many Requests", retryAfter: nil))
        #expect(TransferHTTPStatus.failure(408, retryAfter: nil) == .transient("the server answered 408 Request Timeout", retryAfter: nil))
        #expect(TransferHTTPStatus.isTransient(599) && !TransferHTTPStatus.isTransient(499))
    }

    @Test("TR-4: any other status fails the task with it, and a hint where the meaning is not obvious")
    func permanentStatuses() {
        #expect(TransferHTTPStatus.failure(404, retryAfter: nil) == .permanent(status: 404, "the server answered 404 Not Found"))
        #expect(
            TransferHTTPStatus.failure(403, retryAfter: 60)
                == .permanent(status: 403, "the server answered 403 Forbidden; the app's credentials (its headers) were refused"))
        #expect(
            TransferHTTPStatus.failure(304, retryAfter: nil)
                == .permanent(
                    status: 304,
                    "the server answered 304 Not Modified (the app's conditional headers matched: there is nothing new to fetch)"))
        #expect(TransferHTTPStatus.describe(299) == "299", "a status without a phrase is its number")
    }
}
