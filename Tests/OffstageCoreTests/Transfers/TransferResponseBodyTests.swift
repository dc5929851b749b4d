import Foundation
import OffstageCore
import OffstageSimulator
import Testing

/// An upload's response body in the core (SPEC TR-1, TR-3, TR-6; decision 0041): the completed task holds it, it is
/// journaled with the completion before anything else happens, the app hears of the task once, and acknowledged it
/// is forgotten with the task. On virtual time.
@Suite("Transfers: an upload's response body in the core")
struct TransferResponseBodyTests {
    @Test("TR-3, TR-6: an upload completes with a body while its app is not running: the task and its journal row hold the body, the app is launched and hears the task once, then the body is gone with it")
    func responseBodyIsJournaledAndGivenOnce() throws {
        var sim = makeSimulation()
        let url = "https://files.example.com/upload"
        sim.transferSizes = [url: 1_000_000_000_000]  // the simulated network never ends it: the test does
        try sim.openAndSettle(appA)
        sim.openTransferSession(appA, identifier: downloads, configuration: .init())
        let request = TransferRequest(kind: .upload, url: url, method: "POST", uploadFile: "/data/report.bin", filename: "")
        let created = sim.createTransfer(appA, session: downloads, request)
        let id = try #require(created)
        #expect(sim.transfer(id)?.state == .running)
        sim.home()
        sim.run(for: .seconds(2))
        let pid = try #require(sim.status(of: appA)?.pid)
        sim.input { core, now in core.processExited(appA, pid: pid, status: .signaled(9), at: now) }

        let body = TransferResponseBody(Data(#"{"id": 42, "stored": true}"#.utf8), truncated: false)
        sim.endAttempt(id, .completed(status: 201, responseBody: body))
        #expect(sim.transfer(id)?.state == .completed)
        #expect(sim.transfer(id)?.responseBody == body, "the finished task holds the body")
        #expect(sim.transferJournal[id]?.responseBody == body, "journaled with the completion (TR-6)")
        #expect(sim.transferJournal[id]?.state == .completed)

        sim.run(for: .seconds(10))
        #expect(sim.launches(of: appA) == [.user, .transferEvents])
        #expect(sim.transferEventsHeard[appA] == [id], "heard once")
        #expect(sim.transfer(id) == nil && sim.transferJournal[id] == nil, "acknowledged: forgotten with its body")
    }

    @Test("TR-4: a failed upload holds no body; a retried one keeps none from a failed attempt")
    func failedUploadHoldsNoBody() throws {
        var sim = makeSimulation()
        let url = "https://files.example.com/upload"
        sim.transferSizes = [url: 1_000_000_000_000]
        try sim.openAndSettle(appA)
        sim.openTransferSession(appA, identifier: downloads, configuration: .init())
        let request = TransferRequest(kind: .upload, url: url, uploadFile: "/data/report.bin", filename: "")
        let created = sim.createTransfer(appA, session: downloads, request)
        let id = try #require(created)
        sim.endAttempt(id, .transient("the server answered 503 Service Unavailable", retryAfter: nil))
        #expect(sim.transfer(id)?.responseBody == nil)
        sim.run(for: .seconds(6))
        // The app gone, the failed task waits in the journal for it.
        sim.home()
        sim.run(for: .seconds(2))
        let pid = try #require(sim.status(of: appA)?.pid)
        sim.input { core, now in core.processExited(appA, pid: pid, status: .signaled(9), at: now) }
        sim.endAttempt(id, .permanent(status: 413, "the server answered 413 Content Too Large"))
        let failed = try #require(sim.transferJournal[id])
        #expect(failed.state == .failed && failed.responseBody == nil)
    }

    @Test("TR-1: the cap is a transfer setting, 64 KiB by default; its bounds are refused with a clear error")
    func capSetting() throws {
        #expect(TransferLimits().maximumResponseBodyBytes == 65_536)
        let decoded = try JSONDecoder().decode(TransferLimits.self, from: Data(#"{"maximumResponseBodyBytes": 0}"#.utf8))
        #expect(decoded.maximumResponseBodyBytes == 0)
        for bad in ["-1", "1048577"] {
            #expect {
                try JSONDecoder().decode(TransferLimits.self, from: Data(#"{"maximumResponseBodyBytes": \#(bad)}"#.utf8))
            } throws: { error in
                "\(error)".contains("must be from 0 to 1048576 bytes")
            }
        }
    }
}
