import OffstageCore
import Foundation
import Glibc
@testable import OffstageDaemon
import Testing
import TestProcesses

/// The transfer engine against a real nginx the tests start (SPEC TR-1, TR-2, TR-4): whole downloads, resumes with
/// ranges and validators, restarts, the statuses worth retrying and those not, uploads, bad URLs, a full disk and
/// cancellation. What nginx cannot be made to do (a connection dropped mid-body, a stall, Retry-After as a date, a
/// POST upload) is done by `transfer_fault_server.py`. Each test ends exactly the servers it started.
@Suite("Transfers: the engine against real servers", .timeLimit(.minutes(2)))
struct HTTPTransferEngineTests {
    /// 3 MiB and a few bytes: three checkpoints of 1 MiB, and a tail.
    static let size = 3 * 1_048_576 + 4_099

    /// Runs `body` with an nginx and an engine, ending both whatever happens.
    func withNginx(_ body: (NginxServer, TransferEngineFixture) async throws -> Void) async throws {
        let nginx = try NginxServer.start()
        defer { nginx.stop() }
        try await TransferEngineFixture.with { fixture in try await body(nginx, fixture) }
    }

    /// Runs `body` with the fault server and an engine, ending both whatever happens.
    func withFaultServer(_ body: (TransferFaultServer, TransferEngineFixture) async throws -> Void) async throws {
        let server = try TransferFaultServer.start()
        defer { server.stop() }
        try await TransferEngineFixture.with { fixture in try await body(server, fixture) }
    }

    /// Writes `data` as `name` under `root`.
    func serve(_ data: Data, as name: String, in root: String) throws {
        try data.write(to: URL(fileURLWithPath: root + "/" + name))
    }

    /// The validator nginx gives `name` now: a whole download of it into a scratch file.
    func validator(of url: String, _ fixture: TransferEngineFixture) async throws -> TransferValidator {
        let (outcome, _) = await fixture.run(.download(url, to: fixture.folder + "/scratch-\(UUID().uuidString)"))
        guard case .completed(_, _, let validator?, _, _, _) = outcome else {
            throw TransferEngineFixture.FixtureError("a whole download of \(url) gave \(outcome), no validator")
        }
        return validator
    }

    // MARK: Downloads

    @Test("TR-1: a download arrives whole, byte for byte, in a 0600 part file, with its validator, type and name")
    func wholeDownload() async throws {
        try await withNginx { nginx, fixture in
            let data = TransferEngineFixture.randomBytes(Self.size)
            try serve(data, as: "file.bin", in: nginx.root)
            let part = fixture.folder + "/file.part"
            let (outcome, events) = await fixture.run(.download(nginx.url("/file.bin"), to: part))
            guard case .completed(200, let bytes, let validator?, let mimeType, let name, _) = outcome else {
                Issue.record("expected completed with a validator, got \(outcome)")
                return
            }
            #expect(bytes == Int64(Self.size))
            #expect(validator.hasStrongETag)
            #expect(validator.lastModified != nil)
            #expect(mimeType == "application/octet-stream")
            #expect(name == "file.bin")
            #expect(TransferEngineFixture.contents(part) == data)
            var status = stat()
            #expect(stat(part, &status) == 0)
            #expect(status.st_mode & 0o777 == 0o600)
            #expect(events.starts == [.responseStarted(status: 200, offset: 0, expectedTotal: Int64(Self.size), validator: validator, restartReason: nil)])
            // One checkpoint past each MiB (a chunk's end, not the exact multiple).
            let checkpoints = events.checkpoints
            #expect(checkpoints.count == 3)
            for (index, bytes) in checkpoints.enumerated() {
                #expect(bytes >= Int64(index + 1) * 1_048_576 && bytes < Int64(index + 2) * 1_048_576)
            }
            let requests = try nginx.requests(atLeast: 1)
            #expect(requests.map(\.range) == [nil])
        }
    }

    @Test("TR-4: a resume with a strong ETag asks only for the rest, and appends it to an identical file")
    func resumeWithETag() async throws {
        try await withNginx { nginx, fixture in
            let data = TransferEngineFixture.randomBytes(Self.size)
            try serve(data, as: "file.bin", in: nginx.root)
            let validator = try await validator(of: nginx.url("/file.bin"), fixture)
            let half = Int64(Self.size / 2)
            let part = fixture.folder + "/file.part"
            try data.prefix(Int(half)).write(to: URL(fileURLWithPath: part))
            let (outcome, events) = await fixture.run(.download(nginx.url("/file.bin"), to: part, resumeFrom: half, validator: validator))
            #expect(
                outcome
                    == .completed(
                        status: 206, bytes: Int64(Self.size), validator: validator, mimeType: "application/octet-stream", suggestedFilename: "file.bin"))
            #expect(TransferEngineFixture.contents(part) == data)
            #expect(
                events.starts == [.responseStarted(status: 206, offset: half, expectedTotal: Int64(Self.size), validator: validator, restartReason: nil)])
            // The server was asked for the rest only, and sent only that.
            let resumed = try nginx.requests(atLeast: 2)[1]
            #expect(resumed.range == "bytes=\(half)-")
            #expect(resumed.ifRange == validator.etag)
            #expect(resumed.status == 206)
            #expect(resumed.bodyBytesSent == Int64(Self.size) - half)
        }
    }

    @Test("TR-4: a part file shorter than the daemon thought resumes from its real size")
    func shortPartFile() async throws {
        try await withNginx { nginx, fixture in
            let data = TransferEngineFixture.randomBytes(Self.size)
            try serve(data, as: "file.bin", in: nginx.root)
            let validator = try await validator(of: nginx.url("/file.bin"), fixture)
            let part = fixture.folder + "/file.part"
            try data.prefix(1000).write(to: URL(fileURLWithPath: part))
            let (outcome, events) = await fixture.run(.download(nginx.url("/file.bin"), to: part, resumeFrom: 500_000, validator: validator))
            #expect(outcome.bytesDone == Int64(Self.size))
            #expect(TransferEngineFixture.contents(part) == data)
            #expect(events.starts.first == .responseStarted(status: 206, offset: 1000, expectedTotal: Int64(Self.size), validator: validator, restartReason: nil))
            #expect(try nginx.requests(atLeast: 2)[1].range == "bytes=1000-")
        }
    }

    @Test("TR-4: a server that does not honour ranges gets a restart from zero, with the reason")
    func serverIgnoresRanges() async throws {
        try await withNginx { nginx, fixture in
            let data = TransferEngineFixture.randomBytes(Self.size)
            try serve(data, as: "file.bin", in: nginx.root)
            let url = nginx.url("/norange/file.bin")
            let validator = try await validator(of: url, fixture)
            let part = fixture.folder + "/file.part"
            // The kept bytes are wrong on purpose: a restart must not keep any of them.
            try Data(repeating: 0xEE, count: 100_000).write(to: URL(fileURLWithPath: part))
            let (outcome, events) = await fixture.run(.download(url, to: part, resumeFrom: 100_000, validator: validator))
            #expect(outcome.bytesDone == Int64(Self.size))
            guard case .completed(200, _, _, _, _, _) = outcome else {
                Issue.record("expected completed with 200, got \(outcome)")
                return
            }
            #expect(TransferEngineFixture.contents(part) == data)
            #expect(
                events.starts == [
                    .responseStarted(
                        status: 200, offset: 0, expectedTotal: Int64(Self.size), validator: validator,
                        restartReason: "the server does not honour ranges")
                ])
            #expect(try nginx.requests(atLeast: 2)[1].range == "bytes=100000-")
        }
    }

    @Test("TR-4: a file changed on the server between attempts restarts from zero with the reason, and ends as the new file")
    func fileChangedOnServer() async throws {
        try await withNginx { nginx, fixture in
            let old = TransferEngineFixture.randomBytes(Self.size)
            let path = nginx.root + "/file.bin"
            try serve(old, as: "file.bin", in: nginx.root)
            let oldValidator = try await validator(of: nginx.url("/file.bin"), fixture)
            let part = fixture.folder + "/file.part"
            try old.prefix(1_000_000).write(to: URL(fileURLWithPath: part))
            // The new version: another size, and a modification time an hour later (nginx's ETag is made of both).
            let new = TransferEngineFixture.randomBytes(Self.size - 12_345)
            try new.write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(3600)], ofItemAtPath: path)
            let (outcome, events) = await fixture.run(.download(nginx.url("/file.bin"), to: part, resumeFrom: 1_000_000, validator: oldValidator))
            guard case .completed(200, let bytes, let newValidator?, _, _, _) = outcome else {
                Issue.record("expected completed with 200 and a validator, got \(outcome)")
                return
            }
            #expect(bytes == Int64(new.count))
            #expect(newValidator != oldValidator)
            #expect(TransferEngineFixture.contents(part) == new)
            let reason = "the file changed on the server (validator \(oldValidator.etag ?? "")→\(newValidator.etag ?? ""))"
            #expect(
                events.starts == [
                    .responseStarted(status: 200, offset: 0, expectedTotal: Int64(new.count), validator: newValidator, restartReason: reason)
                ])
            let resumed = try nginx.requests(atLeast: 2)[1]
            #expect(resumed.ifRange == oldValidator.etag)
            #expect(resumed.status == 200)
        }
    }

    @Test("TR-4: a 416 to a resume starts over with one request without Range")
    func rangeNotSatisfiable() async throws {
        try await withNginx { nginx, fixture in
            let data = TransferEngineFixture.randomBytes(10_000)
            try serve(data, as: "small.bin", in: nginx.root)
            let part = fixture.folder + "/small.part"
            // Longer than the file on the server, and no validator to send: the range cannot be served.
            try Data(repeating: 1, count: 20_000).write(to: URL(fileURLWithPath: part))
            let (outcome, events) = await fixture.run(.download(nginx.url("/small.bin"), to: part, resumeFrom: 20_000))
            guard case .completed(200, 10_000, _, _, _, _) = outcome else {
                Issue.record("expected completed with 200 and 10,000 bytes, got \(outcome)")
                return
            }
            #expect(TransferEngineFixture.contents(part) == data)
            guard case .responseStarted(200, 0, 10_000, _, let reason?) = events.starts.first, events.starts.count == 1 else {
                Issue.record("expected one responseStarted at 0 with a restart reason, got \(events.all)")
                return
            }
            #expect(reason.contains("416"))
            let requests = try nginx.requests(atLeast: 2)
            #expect(requests.map(\.status) == [416, 200])
            #expect(requests.map(\.range) == ["bytes=20000-", nil])
        }
    }

    @Test("TR-6: a part file already whole (its attempt ended before it could say so) fetches its last byte again, not the file")
    func alreadyWhole() async throws {
        try await withNginx { nginx, fixture in
            // Exactly 3 MiB: the last checkpoint falls on the last byte.
            let data = TransferEngineFixture.randomBytes(3 * 1_048_576)
            try serve(data, as: "whole.bin", in: nginx.root)
            let validator = try await validator(of: nginx.url("/whole.bin"), fixture)
            let part = fixture.folder + "/whole.part"
            try data.write(to: URL(fileURLWithPath: part))
            let (outcome, events) = await fixture.run(
                .download(nginx.url("/whole.bin"), to: part, resumeFrom: Int64(data.count), validator: validator))
            #expect(
                outcome
                    == .completed(
                        status: 206, bytes: Int64(data.count), validator: validator, mimeType: "application/octet-stream",
                        suggestedFilename: "whole.bin"))
            #expect(TransferEngineFixture.contents(part) == data)
            #expect(
                events.starts == [
                    .responseStarted(status: 206, offset: Int64(data.count - 1), expectedTotal: Int64(data.count), validator: validator, restartReason: nil)
                ])
            let requests = try nginx.requests(atLeast: 3).dropFirst()
            #expect(requests.map(\.status) == [416, 206])
            #expect(requests.map(\.range) == ["bytes=\(data.count)-", "bytes=\(data.count - 1)-"])
            #expect(requests.last?.bodyBytesSent == 1)
        }
    }

    @Test("TR-1: a redirect is followed, and the name suggested is the final URL's")
    func redirectFollowed() async throws {
        try await withNginx { nginx, fixture in
            let data = TransferEngineFixture.randomBytes(5000)
            try serve(data, as: "target.txt", in: nginx.root)
            let part = fixture.folder + "/t.part"
            let (outcome, _) = await fixture.run(.download(nginx.url("/moved/target.txt"), to: part))
            guard case .completed(200, 5000, _, "text/plain", "target.txt", _) = outcome else {
                Issue.record("expected completed as text/plain named target.txt, got \(outcome)")
                return
            }
            #expect(TransferEngineFixture.contents(part) == data)
        }
    }

    // MARK: Statuses

    @Test("TR-4: 503 with Retry-After is transient with those seconds, and the next attempt succeeds once the server is ready")
    func serviceUnavailableThenSuccess() async throws {
        try await withNginx { nginx, fixture in
            let data = TransferEngineFixture.randomBytes(Self.size)
            try serve(data, as: "file.bin", in: nginx.root)
            let part = fixture.folder + "/file.part"
            let (first, events) = await fixture.run(.download(nginx.url("/flaky/file.bin"), to: part))
            #expect(first == .transient(reason: "the server answered 503 Service Unavailable", retryAfter: 7, bytesDone: 0, validator: nil))
            #expect(events.all.isEmpty)
            #expect(TransferEngineFixture.contents(part).isEmpty)
            #expect(FileManager.default.createFile(atPath: nginx.flakyReadyFile, contents: Data()))
            let (second, _) = await fixture.run(.download(nginx.url("/flaky/file.bin"), to: part))
            guard case .completed(200, let bytes, _, _, _, _) = second else {
                Issue.record("expected completed, got \(second)")
                return
            }
            #expect(bytes == Int64(Self.size))
            #expect(TransferEngineFixture.contents(part) == data)
        }
    }

    @Test("TR-4: 404 is permanent with its status")
    func notFound() async throws {
        try await withNginx { nginx, fixture in
            let (outcome, events) = await fixture.run(.download(nginx.url("/missing.bin"), to: fixture.folder + "/m.part"))
            #expect(outcome == .permanent(status: 404, reason: "the server answered 404 Not Found", bytesDone: 0))
            #expect(events.all.isEmpty)
        }
    }

    @Test("TR-4: 429 with Retry-After in seconds is transient with those seconds, the kept bytes and validator untouched")
    func tooManyRequests() async throws {
        try await withNginx { nginx, fixture in
            let part = fixture.folder + "/l.part"
            let kept = Data(repeating: 7, count: 4096)
            try kept.write(to: URL(fileURLWithPath: part))
            let validator = TransferValidator(etag: #""abc""#, lastModified: nil)
            let (outcome, _) = await fixture.run(.download(nginx.url("/limited/file.bin"), to: part, resumeFrom: 4096, validator: validator))
            #expect(outcome == .transient(reason: "the server answered 429 Too Many Requests", retryAfter: 30, bytesDone: 4096, validator: validator))
            #expect(TransferEngineFixture.contents(part) == kept)
        }
    }

    @Test("TR-4: 429 with Retry-After as an HTTP-date is transient with the seconds from now")
    func tooManyRequestsUntilDate() async throws {
        try await withFaultServer { server, fixture in
            let (outcome, _) = await fixture.run(.download(server.url("/busy?seconds=600"), to: fixture.folder + "/b.part"))
            guard case .transient(let reason, let retryAfter?, 0, nil) = outcome else {
                Issue.record("expected transient with a Retry-After, got \(outcome)")
                return
            }
            #expect(reason == "the server answered 429 Too Many Requests")
            // The date is 600 s after the server's clock when it answered, to the second; the same clock, read a moment
            // later: just under 600 s.
            #expect(retryAfter > 500 && retryAfter <= 600)
        }
    }

    @Test("TR-4: too many redirects is permanent, without a status")
    func tooManyRedirects() async throws {
        try await withNginx { nginx, fixture in
            let (outcome, _) = await fixture.run(.download(nginx.url("/deeper/a"), to: fixture.folder + "/r.part"))
            guard case .permanent(nil, let reason, 0) = outcome else {
                Issue.record("expected permanent without status, got \(outcome)")
                return
            }
            #expect(reason.contains("too many redirects"))
        }
    }

    // MARK: Broken connections

    @Test("TR-4: a connection dropped mid-body is transient with the bytes written, and the next attempt resumes to an identical file")
    func droppedMidBody() async throws {
        try await withFaultServer { server, fixture in
            let data = TransferEngineFixture.randomBytes(Self.size)
            try serve(data, as: "file.bin", in: server.root)
            let url = server.url("/drop/file.bin?after=1500000")
            let part = fixture.folder + "/file.part"
            let (first, _) = await fixture.run(.download(url, to: part))
            guard case .transient(let reason, nil, let bytesDone, let validator?) = first else {
                Issue.record("expected transient with a validator, got \(first)")
                return
            }
            #expect(reason.contains("after"))
            #expect(bytesDone > 0 && bytesDone <= 1_500_000)
            #expect(TransferEngineFixture.contents(part) == data.prefix(Int(bytesDone)))
            let (second, events) = await fixture.run(.download(url, to: part, resumeFrom: bytesDone, validator: validator))
            #expect(
                second
                    == .completed(
                        status: 206, bytes: Int64(Self.size), validator: validator, mimeType: "application/octet-stream",
                        suggestedFilename: "file.bin"))
            #expect(TransferEngineFixture.contents(part) == data)
            #expect(events.starts.first == .responseStarted(status: 206, offset: bytesDone, expectedTotal: Int64(Self.size), validator: validator, restartReason: nil))
            let requests = server.requests()
            #expect(requests.count == 2)
            #expect(requests.last?.range == "bytes=\(bytesDone)-")
            #expect(requests.last?.ifRange == validator.etag)
            #expect(requests.last?.bodyBytesSent == Int64(Self.size) - bytesDone)
        }
    }

    @Test("TR-4: a 206 that does not repeat the validator keeps the one the resume sent")
    func partialContentWithoutValidator() async throws {
        try await withFaultServer { server, fixture in
            let data = TransferEngineFixture.randomBytes(Self.size)
            try serve(data, as: "file.bin", in: server.root)
            let url = server.url("/drop/file.bin?after=1000000&bare=1")
            let part = fixture.folder + "/file.part"
            let (first, _) = await fixture.run(.download(url, to: part))
            guard case .transient(_, nil, let bytesDone, let validator?) = first else {
                Issue.record("expected transient with a validator, got \(first)")
                return
            }
            let (second, _) = await fixture.run(.download(url, to: part, resumeFrom: bytesDone, validator: validator))
            guard case .completed(206, _, validator, _, _, _) = second else {
                Issue.record("expected completed with 206 and the validator \(validator), got \(second)")
                return
            }
            #expect(TransferEngineFixture.contents(part) == data)
        }
    }

    @Test("TR-4: a response that stops sending ends as transient after the idle timeout, keeping what arrived")
    func idleTimeout() async throws {
        try await withFaultServer { server, fixture in
            try serve(TransferEngineFixture.randomBytes(100_000), as: "file.bin", in: server.root)
            var job = HTTPTransferJob.download(server.url("/stall/file.bin?after=1000"), to: fixture.folder + "/s.part")
            job.idleTimeout = 0.5
            let (outcome, _) = await fixture.run(job)
            guard case .transient(let reason, nil, let bytesDone, _?) = outcome else {
                Issue.record("expected transient with a validator, got \(outcome)")
                return
            }
            #expect(reason == "no byte moved for 0.5 s (the idle timeout)")
            #expect(bytesDone == 1000)
        }
    }

    @Test("TR-2: cancelling the calling task cancels the request and returns cancelled with the bytes kept")
    func cancellation() async throws {
        try await withFaultServer { server, fixture in
            try serve(TransferEngineFixture.randomBytes(100_000), as: "file.bin", in: server.root)
            let part = fixture.folder + "/c.part"
            let (started, startedContinuation) = AsyncStream<Void>.makeStream()
            let engine = fixture.engine
            let job = HTTPTransferJob.download(server.url("/stall/file.bin?after=2000"), to: part)
            let task = Task {
                await engine.run(job) { event in
                    if case .responseStarted = event { startedContinuation.yield() }
                }
            }
            // The response has begun (the server then sends nothing more): cancel.
            for await _ in started { break }
            task.cancel()
            let outcome = await task.value
            guard case .cancelled(let bytesDone) = outcome else {
                Issue.record("expected cancelled, got \(outcome)")
                return
            }
            #expect(bytesDone <= 2000)
            #expect(TransferEngineFixture.contents(part).count == Int(bytesDone))
        }
    }

    @Test("TR-2: a task cancelled before the attempt starts sends nothing")
    func cancelledBeforeStart() async throws {
        try await withNginx { nginx, fixture in
            try serve(Data(repeating: 1, count: 100), as: "f.bin", in: nginx.root)
            let engine = fixture.engine
            let job = HTTPTransferJob.download(nginx.url("/f.bin"), to: fixture.folder + "/f.part")
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await engine.run(job) { _ in }
            }
            #expect(await task.value == .cancelled(bytesDone: 0))
            #expect(nginx.requests().isEmpty)
        }
    }

    // MARK: Uploads

    @Test("TR-1: an upload (PUT) sends the file whole: the server has the same bytes")
    func uploadPut() async throws {
        try await withNginx { nginx, fixture in
            let data = TransferEngineFixture.randomBytes(Self.size)
            let file = fixture.folder + "/up.bin"
            try data.write(to: URL(fileURLWithPath: file))
            let (outcome, events) = await fixture.run(.upload(file, to: nginx.url("/upload/stored.bin"), headers: [("Content-Length", "1")]))
            guard case .completed(201, let bytes, _, _, nil, nil) = outcome else {
                Issue.record("expected completed with 201, got \(outcome)")
                return
            }
            #expect(bytes == Int64(Self.size))
            #expect(TransferEngineFixture.contents(nginx.root + "/stored.bin") == data)
            #expect(events.checkpoints.count == 3)
            guard case .responseStarted(201, 0, _, _, nil) = events.starts.first else {
                Issue.record("expected responseStarted with 201, got \(events.all)")
                return
            }
        }
    }

    @Test("TR-1: an upload (POST) sends the file whole with the app's method")
    func uploadPost() async throws {
        try await withFaultServer { server, fixture in
            let data = TransferEngineFixture.randomBytes(700_000)
            let file = fixture.folder + "/up.bin"
            try data.write(to: URL(fileURLWithPath: file))
            let (outcome, _) = await fixture.run(.upload(file, to: server.url("/upload/posted.bin"), method: "POST"))
            #expect(
                outcome
                    == .completed(
                        status: 201, bytes: 700_000, validator: TransferValidator(etag: #""upload-700000""#, lastModified: nil), mimeType: "text/plain",
                        suggestedFilename: nil, responseBody: TransferResponseBody(Data("stored 700000 bytes\n".utf8))))
            #expect(TransferEngineFixture.contents(server.root + "/posted.bin") == data)
            #expect(server.requests().map(\.method) == ["POST"])
        }
    }

    @Test("TR-4: an upload file that cannot be read is permanent, naming the file")
    func unreadableUploadFile() async throws {
        try await TransferEngineFixture.with { fixture in
            let missing = fixture.folder + "/nothing-here.bin"
            let (outcome, _) = await fixture.run(.upload(missing, to: "http://127.0.0.1:9/upload/x"))
            guard case .permanent(nil, let reason, 0) = outcome else {
                Issue.record("expected permanent, got \(outcome)")
                return
            }
            #expect(reason.contains(missing))
            #expect(reason.contains("No such file or directory"))
            let (folder, _) = await fixture.run(.upload(fixture.folder, to: "http://127.0.0.1:9/upload/x"))
            guard case .permanent(nil, let folderReason, 0) = folder else {
                Issue.record("expected permanent, got \(folder)")
                return
            }
            #expect(folderReason.contains("not a regular file"))
        }
    }

    // MARK: Bad URLs, connections, disks

    @Test("TR-4: a bad URL is permanent with a reason that names the URL and what is wrong")
    func badURLs() async throws {
        try await TransferEngineFixture.with { fixture in
            let cases = [
                ("ftp://example.net/file.bin", "has the scheme ftp"), ("http:///file.bin", "has no host"),
                ("not a url at all", "is not a valid URL"), ("file:///etc/passwd", "has the scheme file"),
            ]
            for (url, expected) in cases {
                let (outcome, _) = await fixture.run(.download(url, to: fixture.folder + "/x.part"))
                guard case .permanent(nil, let reason, 0) = outcome else {
                    Issue.record("\(url): expected permanent, got \(outcome)")
                    continue
                }
                #expect(reason.contains(expected), "\(url): \(reason)")
                #expect(reason.contains(url), "\(url): \(reason)")
            }
        }
    }

    @Test("TR-4: a connection refused is transient, with nothing written")
    func connectionRefused() async throws {
        try await TransferEngineFixture.with { fixture in
            // A port that was free a moment ago: nothing listens there.
            let port = try FreePort.loopback()
            let (outcome, _) = await fixture.run(.download("http://127.0.0.1:\(port)/file.bin", to: fixture.folder + "/x.part"))
            guard case .transient(let reason, nil, 0, nil) = outcome else {
                Issue.record("expected transient, got \(outcome)")
                return
            }
            #expect(reason.contains("before a response"))
        }
    }

    @Test("TR-4: a full disk ends the download as writeFailed with ENOSPC and the bytes that fit")
    func diskFull() async throws {
        try await withNginx { nginx, fixture in
            try serve(TransferEngineFixture.randomBytes(Self.size), as: "file.bin", in: nginx.root)
            let small = fixture.folder + "/small-disk"
            try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
            guard mount("tmpfs", small, "tmpfs", 0, "size=1m,mode=0700") == 0 else {
                // Not allowed to mount here: a real write error from /dev/full instead.
                let code = errno
                let part = fixture.folder + "/full.part"
                try FileManager.default.createSymbolicLink(atPath: part, withDestinationPath: "/dev/full")
                let (outcome, _) = await fixture.run(.download(nginx.url("/file.bin"), to: part))
                guard case .writeFailed(let reason, let failure, _) = outcome else {
                    Issue.record("expected writeFailed (on /dev/full, mount failed with errno \(code)), got \(outcome)")
                    return
                }
                #expect(failure != 0)
                #expect(reason.contains(part))
                return
            }
            defer { umount2(small, Int32(MNT_DETACH)) }
            let part = small + "/file.part"
            let (outcome, _) = await fixture.run(.download(nginx.url("/file.bin"), to: part))
            guard case .writeFailed(let reason, ENOSPC, let bytesDone) = outcome else {
                Issue.record("expected writeFailed with ENOSPC, got \(outcome)")
                return
            }
            #expect(reason.contains("No space left on device"))
            #expect(reason.contains(part))
            #expect(bytesDone > 0 && bytesDone <= 1_048_576)
            #expect(TransferEngineFixture.contents(part).count == Int(bytesDone))
        }
    }
}
