import OffstageCore
import Foundation
@testable import OffstageDaemon
import Testing
import TestProcesses

/// An upload's answer (SPEC TR-1, decision 0041): the body of the server's 2xx response is kept for the app up to the
/// job's limit, cut there and flagged when longer, and the upload completes either way. The server is
/// `transfer_fault_server.py`, whose `/echo/NAME` answers the uploaded bytes back.
@Suite("Transfers: an upload's response body (TR-1)", .timeLimit(.minutes(2)))
struct HTTPTransferUploadResponseTests {
    func withFaultServer(_ body: (TransferFaultServer, TransferEngineFixture) async throws -> Void) async throws {
        let server = try TransferFaultServer.start()
        defer { server.stop() }
        try await TransferEngineFixture.with { fixture in try await body(server, fixture) }
    }

    /// Writes `count` random bytes into the fixture's folder as `name`; returns them and the path.
    func uploadFile(_ fixture: TransferEngineFixture, _ name: String, _ count: Int) throws -> (Data, String) {
        let data = TransferEngineFixture.randomBytes(count)
        let path = fixture.folder + "/" + name
        try data.write(to: URL(fileURLWithPath: path))
        return (data, path)
    }

    @Test("TR-1: an accepted upload carries the server's exact response body (binary, 40 KiB) in its outcome, not cut")
    func responseBodyKept() async throws {
        try await withFaultServer { server, fixture in
            let (data, file) = try uploadFile(fixture, "up.bin", 40_000)
            let (outcome, _) = await fixture.run(.upload(file, to: server.url("/echo/echoed.bin"), method: "POST"))
            guard case .completed(200, 40_000, _, "application/octet-stream", nil, let body?) = outcome else {
                Issue.record("expected completed with a body, got \(outcome)")
                return
            }
            #expect(body == TransferResponseBody(data, truncated: false))
            #expect(TransferEngineFixture.contents(server.root + "/echoed.bin") == data)
        }
    }

    @Test("TR-1: a response body longer than the limit is cut at the limit and flagged; the upload completes, the server has the whole file")
    func responseBodyCutAtTheLimit() async throws {
        try await withFaultServer { server, fixture in
            let (data, file) = try uploadFile(fixture, "up.bin", 300_000)
            var job = HTTPTransferJob.upload(file, to: server.url("/echo/big.bin"), method: "POST")
            #expect(job.responseBodyLimit == 65_536, "the default is TransferLimits' 64 KiB")
            let (outcome, _) = await fixture.run(job)
            guard case .completed(200, 300_000, _, _, nil, let body?) = outcome else {
                Issue.record("expected completed with a body, got \(outcome)")
                return
            }
            #expect(body.truncated)
            #expect(body.data == data.prefix(65_536))
            #expect(TransferEngineFixture.contents(server.root + "/big.bin") == data)
            // A smaller limit, and none at all.
            job.responseBodyLimit = 1_000
            let (small, _) = await fixture.run(job)
            guard case .completed(200, 300_000, _, _, nil, let cut?) = small else {
                Issue.record("expected completed with a body, got \(small)")
                return
            }
            #expect(cut == TransferResponseBody(data.prefix(1_000), truncated: true))
            job.responseBodyLimit = 0
            let (none, _) = await fixture.run(job)
            guard case .completed(200, 300_000, _, _, nil, let empty?) = none else {
                Issue.record("expected completed with a (cut, empty) body, got \(none)")
                return
            }
            #expect(empty == TransferResponseBody(Data(), truncated: true))
        }
    }

    @Test("TR-1: an answer exactly as long as the limit is whole, not flagged; an answer without a body gives none")
    func exactLimitAndNoBody() async throws {
        try await withFaultServer { server, fixture in
            let (data, file) = try uploadFile(fixture, "up.bin", 4_096)
            var job = HTTPTransferJob.upload(file, to: server.url("/echo/exact.bin"), method: "POST")
            job.responseBodyLimit = 4_096
            let (outcome, _) = await fixture.run(job)
            guard case .completed(200, 4_096, _, _, nil, let body?) = outcome else {
                Issue.record("expected completed with a body, got \(outcome)")
                return
            }
            #expect(body == TransferResponseBody(data, truncated: false))
        }
        let nginx = try NginxServer.start()
        defer { nginx.stop() }
        try await TransferEngineFixture.with { fixture in
            let (_, file) = try uploadFile(fixture, "up.bin", 1_000)
            let (outcome, _) = await fixture.run(.upload(file, to: nginx.url("/upload/put.bin")))
            guard case .completed(201, 1_000, _, _, nil, nil) = outcome else {
                Issue.record("expected completed without a body (nginx's dav answers 201 with none), got \(outcome)")
                return
            }
        }
    }

    @Test("TR-1: the runner hands the body to the core with the completion")
    func runnerCarriesTheBody() {
        let body = TransferResponseBody(Data("ok".utf8))
        let outcome = HTTPTransferOutcome.completed(
            status: 200, bytes: 2, validator: nil, mimeType: "text/plain", suggestedFilename: nil, responseBody: body)
        #expect(TransferRunner.result(of: outcome) == .completed(status: 200, responseBody: body))
    }
}
