import OffstageCore
import Foundation
import NIOHTTP1
@testable import OffstageDaemon
import Testing

/// What the transfer engine reads in a response head, and what it decides from it, without a server (SPEC TR-4).
@Suite("Transfers: response headers and verdicts")
struct TransferHeadersTests {
    static let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test("TR-4: Retry-After in delta-seconds, and as an HTTP-date in each of its three forms, is seconds from now")
    func retryAfter() {
        #expect(TransferHeaders.retryAfter("120", now: Self.now) == 120)
        #expect(TransferHeaders.retryAfter(" 0 ", now: Self.now) == 0)
        #expect(TransferHeaders.retryAfter("Sun, 06 Nov 1994 08:50:37 GMT", now: Self.now) == 60)
        #expect(TransferHeaders.retryAfter("Sunday, 06-Nov-94 08:51:37 GMT", now: Self.now) == 120)
        #expect(TransferHeaders.retryAfter("Sun Nov  6 08:49:47 1994", now: Self.now) == 10)
        // A date already past asks for no wait; anything else is not a Retry-After.
        #expect(TransferHeaders.retryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now: Self.now) == 0)
        for garbage in ["", "-5", "1.5", "soon", "Sun, 06 Nov 1994", "12abc"] {
            #expect(TransferHeaders.retryAfter(garbage, now: Self.now) == nil, "\(garbage)")
        }
    }

    @Test("TR-4: Content-Range gives the range sent and the size; malformed ones are refused")
    func contentRange() {
        typealias Range = TransferHeaders.ContentRange
        #expect(TransferHeaders.contentRange("bytes 100-199/200") == Range(range: 100...199, total: 200))
        #expect(TransferHeaders.contentRange("bytes 0-0/*") == Range(range: 0...0, total: nil))
        #expect(TransferHeaders.contentRange("bytes */4096") == Range(range: nil, total: 4096))
        for bad in ["bytes 5-4/10", "bytes 0-10/10", "items 0-1/2", "bytes */*", "bytes 1-/5", "bytes -1-2/5", "bytes 0-1"] {
            #expect(TransferHeaders.contentRange(bad) == nil, "\(bad)")
        }
    }

    @Test("TR-3: the suggested file name comes from Content-Disposition (filename* first), never with a folder")
    func suggestedFilename() {
        #expect(TransferHeaders.filename(contentDisposition: #"attachment; filename="report.pdf""#) == "report.pdf")
        #expect(
            TransferHeaders.filename(contentDisposition: #"attachment; filename="euro.txt"; filename*=UTF-8''%E2%82%AC%20rates.txt"#)
                == "€ rates.txt")
        #expect(TransferHeaders.filename(contentDisposition: #"attachment; filename="../../etc/passwd""#) == "passwd")
        #expect(TransferHeaders.filename(contentDisposition: #"attachment; filename="..""#) == nil)
        #expect(TransferHeaders.filename(contentDisposition: "inline") == nil)
        #expect(TransferHeaders.filename(url: "http://h/a/b%20c.zip?x=1") == "b c.zip")
        #expect(TransferHeaders.filename(url: "http://h/") == nil)
        #expect(TransferHeaders.mimeType("Text/HTML; charset=utf-8") == "text/html")
    }

    @Test("TR-4: If-Range carries a strong ETag, else Last-Modified; a weak ETag is never sent")
    func ifRange() {
        #expect(TransferValidator(etag: #""abc""#, lastModified: "d").ifRange == #""abc""#)
        #expect(TransferValidator(etag: #"W/"abc""#, lastModified: "d").ifRange == "d")
        #expect(TransferValidator(etag: nil, lastModified: "d").ifRange == "d")
        #expect(TransferValidator(etag: #"W/"abc""#, lastModified: nil).ifRange == nil)
    }

    func headers(_ pairs: [(String, String)]) -> HTTPHeaders { HTTPHeaders(pairs) }

    @Test("TR-4: a 206 of the range asked for appends; one of another range, or of another version, restarts once")
    func partialContent() {
        let sent = TransferValidator(etag: #""v1""#, lastModified: nil)
        let good = HTTPResponseVerdict.download(
            status: 206, headers: headers([("Content-Range", "bytes 500-999/1000"), ("ETag", #""v1""#)]), offset: 500, sent: sent,
            mayRestart: true, now: Self.now)
        #expect(good == .write(offset: 500, expectedEnd: 1000, expectedTotal: 1000, restartReason: nil))
        let elsewhere = HTTPResponseVerdict.download(
            status: 206, headers: headers([("Content-Range", "bytes 0-999/1000")]), offset: 500, sent: sent, mayRestart: true, now: Self.now)
        guard case .restartWithoutRange(let reason) = elsewhere else {
            Issue.record("a 206 from byte 0 to a request for 500- must restart, got \(elsewhere)")
            return
        }
        #expect(reason.contains("bytes 0-999/1000"))
        let changed = HTTPResponseVerdict.download(
            status: 206, headers: headers([("Content-Range", "bytes 500-999/1000"), ("ETag", #""v2""#)]), offset: 500, sent: sent,
            mayRestart: true, now: Self.now)
        #expect(changed == .restartWithoutRange(reason: #"the file changed on the server (validator "v1"→"v2") and its 206 ignored If-Range"#))
        // The request without Range may not restart again.
        let again = HTTPResponseVerdict.download(
            status: 416, headers: headers([]), offset: 500, sent: nil, mayRestart: false, now: Self.now)
        #expect(again == .permanent(status: 416, reason: "the server could not serve bytes 500- (416 Range Not Satisfiable)"))
    }

    @Test("TR-6: a 416 saying the resource is as long as the bytes kept asks for the last byte, not the whole file")
    func alreadyWhole() {
        let sent = TransferValidator(etag: #""v1""#, lastModified: nil)
        let whole = HTTPResponseVerdict.download(
            status: 416, headers: headers([("Content-Range", "bytes */1000")]), offset: 1000, sent: sent, mayRestart: true, now: Self.now)
        #expect(whole == .refetchLastByte(reason: "the part file already holds all 1000 bytes (416 Range Not Satisfiable (Content-Range bytes */1000))"))
        let shorter = HTTPResponseVerdict.download(
            status: 416, headers: headers([("Content-Range", "bytes */900")]), offset: 1000, sent: sent, mayRestart: true, now: Self.now)
        guard case .restartWithoutRange = shorter else {
            Issue.record("a resource shorter than the bytes kept must restart, got \(shorter)")
            return
        }
    }

    @Test("TR-4: a 200 to a resume restarts from zero, saying whether the file changed or ranges are not honoured")
    func fullContentToResume() {
        let sent = TransferValidator(etag: #""v1""#, lastModified: "Sun, 06 Nov 1994 08:49:37 GMT")
        let changed = HTTPResponseVerdict.download(
            status: 200, headers: headers([("Content-Length", "10"), ("ETag", #""v2""#)]), offset: 5, sent: sent, mayRestart: true,
            now: Self.now)
        #expect(
            changed == .write(offset: 0, expectedEnd: 10, expectedTotal: 10, restartReason: #"the file changed on the server (validator "v1"→"v2")"#))
        let same = HTTPResponseVerdict.download(
            status: 200, headers: headers([("Content-Length", "10"), ("ETag", #""v1""#)]), offset: 5, sent: sent, mayRestart: true,
            now: Self.now)
        #expect(same == .write(offset: 0, expectedEnd: 10, expectedTotal: 10, restartReason: "the server does not honour ranges"))
        let fresh = HTTPResponseVerdict.download(
            status: 200, headers: headers([]), offset: 0, sent: nil, mayRestart: true, now: Self.now)
        #expect(fresh == .write(offset: 0, expectedEnd: nil, expectedTotal: nil, restartReason: nil))
    }

    @Test("TR-4: 408, 429 and 5xx are transient with Retry-After; other 4xx and unfollowed 3xx are permanent with the status")
    func failures() {
        #expect(
            HTTPResponseVerdict.download(status: 503, headers: headers([("Retry-After", "7")]), offset: 0, sent: nil, mayRestart: true, now: Self.now)
                == .transient(reason: "the server answered 503 Service Unavailable", retryAfter: 7))
        #expect(
            HTTPResponseVerdict.upload(status: 429, headers: headers([]), now: Self.now)
                == .transient(reason: "the server answered 429 Too Many Requests", retryAfter: nil))
        #expect(
            HTTPResponseVerdict.upload(status: 408, headers: headers([]), now: Self.now)
                == .transient(reason: "the server answered 408 Request Timeout", retryAfter: nil))
        #expect(
            HTTPResponseVerdict.download(status: 404, headers: headers([]), offset: 0, sent: nil, mayRestart: true, now: Self.now)
                == .permanent(status: 404, reason: "the server answered 404 Not Found"))
        #expect(HTTPResponseVerdict.upload(status: 201, headers: headers([]), now: Self.now) == .accepted)
        guard case .permanent(302, let reason) = HTTPResponseVerdict.upload(status: 302, headers: headers([]), now: Self.now) else {
            Issue.record("an unfollowed 302 must be permanent")
            return
        }
        #expect(reason.contains("redirect"))
    }

    @Test("TR-1: a job's URL must be absolute http or https with a host; the reason names what is wrong")
    func urls() {
        func reason(_ url: String) -> String? {
            if case .failure(let problem) = HTTPTransferEngine.check(url) { return problem.reason }
            return nil
        }
        #expect(reason("https://example.net/a") == nil)
        #expect(reason("HTTP://example.net/a") == nil)
        #expect(reason("ftp://example.net/file")?.contains("scheme ftp") == true)
        #expect(reason("http:///file")?.contains("no host") == true)
        #expect(reason("not a url at all")?.contains("not a valid URL") == true)
        #expect(reason("")?.contains("not a valid URL") == true)
        #expect(reason("/just/a/path")?.contains("not a valid URL") == true)
        #expect(reason("http+unix://%2Ftmp%2Fsock/x")?.contains("scheme http+unix") == true)
    }

    @Test("TR-4: URLs in logs and reasons lose their credentials, query and fragment")
    func redactedURLs() {
        #expect(HTTPTransferEngine.redacted("https://user:secret@example.net:8443/a/b.zip?X-Signature=abc#part") == "https://example.net:8443/a/b.zip")
        #expect(HTTPTransferEngine.redacted("http://example.net/") == "http://example.net/")
        #expect(!HTTPTransferEngine.redacted("not a url?token=1").contains("token"))
        #expect(!HTTPTransferEngine.redacted("%zz://u:p@h/?token=1").contains("token"))
    }
}
