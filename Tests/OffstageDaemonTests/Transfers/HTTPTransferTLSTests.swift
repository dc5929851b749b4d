import OffstageCore
import Foundation
@testable import OffstageDaemon
import Testing
import TestProcesses

/// The transfer engine against a real nginx that speaks TLS with a certificate the test made (SPEC TR-4): a
/// certificate the engine cannot trust ends the task at once, as the platform's `NSURLErrorServerCertificateUntrusted`
/// does, instead of being retried for days; trusted, the same download completes.
@Suite("Transfers: TLS certificates (TR-4)", .timeLimit(.minutes(2)))
struct HTTPTransferTLSTests {
    /// Runs `body` with an nginx listening with TLS for `names` and an engine (trusting nginx's certificate when
    /// `trusted`), ending both whatever happens.
    func withTLSNginx(
        names: [String] = ["DNS:localhost", "IP:127.0.0.1"], trusted: Bool = false, _ body: (NginxServer, TransferEngineFixture) async throws -> Void
    ) async throws {
        let nginx = try NginxServer.start(tls: names)
        defer { nginx.stop() }
        try await TransferEngineFixture.with(trusting: trusted ? nginx.certificate : nil) { fixture in try await body(nginx, fixture) }
    }

    /// What is left in the folder of part files besides `kept`.
    func leftovers(_ fixture: TransferEngineFixture, besides kept: Set<String> = []) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixture.folder)) ?? []).filter { !kept.contains($0) }
    }

    @Test("TR-4: a download from a server whose certificate is self-signed ends permanent on its one attempt, naming the host, what is wrong and the fix; no byte written, nothing asked of the server")
    func untrustedCertificateIsPermanent() async throws {
        try await withTLSNginx { nginx, fixture in
            try TransferEngineFixture.randomBytes(100_000).write(to: URL(fileURLWithPath: nginx.root + "/file.bin"))
            let part = fixture.folder + "/file.part"
            let (outcome, events) = await fixture.run(.download(try #require(nginx.tlsURL("/file.bin")), to: part))
            guard case .permanent(nil, let reason, 0) = outcome else {
                Issue.record("expected permanent, got \(outcome)")
                return
            }
            #expect(reason.contains("127.0.0.1"), "names the host: \(reason)")
            #expect(reason.contains("cannot be verified") && reason.contains("self-signed"), "says what is wrong: \(reason)")
            #expect(reason.contains("trusted authority") && reason.contains("trust store"), "says the fix: \(reason)")
            #expect(events.all.isEmpty)
            #expect(TransferEngineFixture.contents(part).isEmpty, "no byte written")
            #expect(nginx.requests().isEmpty, "no request reached the server")
            // The core is told it is permanent (a failed task, bad-request), not worth a retry.
            #expect(TransferRunner.result(of: outcome) == .permanent(status: nil, reason))
        }
    }

    @Test("TR-4: the same certificate, trusted, gives the whole file; a certificate for another host name is permanent, naming the host")
    func trustedCertificateAndWrongHostName() async throws {
        try await withTLSNginx(trusted: true) { nginx, fixture in
            let data = TransferEngineFixture.randomBytes(300_000)
            try data.write(to: URL(fileURLWithPath: nginx.root + "/file.bin"))
            let part = fixture.folder + "/file.part"
            let (outcome, _) = await fixture.run(.download(try #require(nginx.tlsURL("/file.bin")), to: part))
            guard case .completed(200, 300_000, _, _, "file.bin", _) = outcome else {
                Issue.record("expected completed, got \(outcome)")
                return
            }
            #expect(TransferEngineFixture.contents(part) == data)
        }
        try await withTLSNginx(names: ["DNS:elsewhere.invalid"], trusted: true) { nginx, fixture in
            try TransferEngineFixture.randomBytes(1_000).write(to: URL(fileURLWithPath: nginx.root + "/file.bin"))
            let (outcome, _) = await fixture.run(.download(try #require(nginx.tlsURL("/file.bin")), to: fixture.folder + "/x.part"))
            guard case .permanent(nil, let reason, 0) = outcome else {
                Issue.record("expected permanent, got \(outcome)")
                return
            }
            #expect(reason.contains("not for the host 127.0.0.1"), "\(reason)")
            #expect(reason.contains("names 127.0.0.1"), "the fix: \(reason)")
            #expect(nginx.requests().isEmpty)
        }
    }

    @Test("TR-4: a handshake the server cuts off (a plain-HTTP server on an https URL) stays transient")
    func handshakeCutOffIsTransient() async throws {
        try await withTLSNginx { nginx, fixture in
            // nginx's plain port answers the ClientHello with a 400 page and closes: not a certificate, a broken handshake.
            let (outcome, _) = await fixture.run(.download("https://127.0.0.1:\(nginx.port)/file.bin", to: fixture.folder + "/x.part"))
            guard case .transient(let reason, nil, 0, nil) = outcome else {
                Issue.record("expected transient, got \(outcome)")
                return
            }
            #expect(reason.contains("before a response"), "\(reason)")
            #expect(leftovers(fixture, besides: ["x.part"]).isEmpty)
        }
    }
}
