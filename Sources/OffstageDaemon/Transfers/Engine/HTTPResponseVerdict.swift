import OffstageCore
import Foundation
import NIOHTTP1

/// What a transfer does with a response head (SPEC TR-4): write its body and from where, ask again without a range,
/// or end the attempt. Decided from the status, the headers and what the request asked for, with no I/O: the
/// attempt carries it out.
enum HTTPResponseVerdict: Equatable, Sendable {
    /// Write the body into the part file from `offset` (0 when a resume became a restart, with `restartReason`).
    /// The part file is complete at `expectedEnd` bytes when the server said how many it sends; `expectedTotal` is
    /// the whole resource's size when known.
    case write(offset: Int64, expectedEnd: Int64?, expectedTotal: Int64?, restartReason: String?)
    /// An upload the server accepted: its body is not the transfer's.
    case accepted
    /// The range asked for cannot be used (416, or a 206 of another range or version): the part file starts over
    /// with one request without Range.
    case restartWithoutRange(reason: String)
    /// A 416 saying the resource is exactly as long as the bytes kept: the part file is already whole (an attempt
    /// wrote its last byte and ended before it could say so). One request for its last byte, with the same
    /// validator, completes it with the resource's own head (type, name) instead of fetching it all again.
    case refetchLastByte(reason: String)
    /// End the attempt as ``HTTPTransferOutcome/transient(reason:retryAfter:bytesDone:validator:)``.
    case transient(reason: String, retryAfter: Double?)
    /// End the attempt as ``HTTPTransferOutcome/permanent(status:reason:bytesDone:)``.
    case permanent(status: Int, reason: String)

    /// The verdict on a download's response head.
    /// - Parameters:
    ///   - offset: the bytes the request asked to keep (it sent `Range: bytes=offset-` when above 0).
    ///   - sent: the validator the request sent in If-Range (or the part file's, when it sent Range alone).
    ///   - mayRestart: whether a ``restartWithoutRange(reason:)`` or ``refetchLastByte(reason:)`` is still allowed
    ///     (one more request per job).
    ///   - now: for a Retry-After given as a date.
    static func download(
        status: Int, headers: HTTPHeaders, offset: Int64, sent: TransferValidator?, mayRestart: Bool, now: Date
    ) -> HTTPResponseVerdict {
        if let failure = failure(status: status, headers: headers, now: now) { return failure }
        let received = TransferValidator(headers: headers)
        switch status {
        case 206:
            let contentRange = headers.first(name: "Content-Range").flatMap(TransferHeaders.contentRange)
            guard let contentRange, let range = contentRange.range, range.lowerBound == offset else {
                let said = headers.first(name: "Content-Range").map { "Content-Range \($0)" } ?? "no Content-Range"
                let reason = "the server answered 206 with \(said) to a request for bytes \(offset)-"
                if mayRestart, offset > 0 { return .restartWithoutRange(reason: reason) }
                return .permanent(status: status, reason: reason)
            }
            if let sent, let received, sent.hasStrongETag, received.differs(from: sent) {
                // The server ignored If-Range but honoured Range: these bytes belong to another version.
                let reason = "the file changed on the server (validator \(sent.summary)→\(received.summary)) and its 206 ignored If-Range"
                if mayRestart, offset > 0 { return .restartWithoutRange(reason: reason) }
                return .transient(reason: reason, retryAfter: nil)
            }
            return .write(offset: offset, expectedEnd: range.upperBound + 1, expectedTotal: contentRange.total, restartReason: nil)
        case 416:
            let said = headers.first(name: "Content-Range").map { " (Content-Range \($0))" } ?? ""
            let reason = "the server could not serve bytes \(offset)- (416 Range Not Satisfiable\(said))"
            let size = headers.first(name: "Content-Range").flatMap(TransferHeaders.contentRange)?.total
            if mayRestart, offset > 0, size == offset {
                return .refetchLastByte(reason: "the part file already holds all \(offset) bytes (416 Range Not Satisfiable\(said))")
            }
            if mayRestart, offset > 0 { return .restartWithoutRange(reason: reason) }
            return .permanent(status: status, reason: reason)
        case 200..<300:
            let length = headers.first(name: "Content-Length").flatMap { TransferHeaders.decimal(Substring($0)) }
            var restartReason: String?
            if offset > 0 {
                if let sent, let received, sent.differs(from: received) {
                    restartReason = "the file changed on the server (validator \(sent.summary)→\(received.summary))"
                } else {
                    restartReason = "the server does not honour ranges"
                }
            }
            // 204 and 205 carry no body: an empty file.
            let end = status == 204 || status == 205 ? 0 : length
            return .write(offset: 0, expectedEnd: end, expectedTotal: end, restartReason: restartReason)
        default:
            return .permanent(status: status, reason: refusal(status))
        }
    }

    /// The verdict on an upload's response head: 2xx accepts it.
    static func upload(status: Int, headers: HTTPHeaders, now: Date) -> HTTPResponseVerdict {
        if let failure = failure(status: status, headers: headers, now: now) { return failure }
        if (200..<300).contains(status) { return .accepted }
        return .permanent(status: status, reason: refusal(status))
    }

    /// The statuses worth retrying (``TransferHTTPStatus/isTransient(_:)``), with the server's Retry-After.
    private static func failure(status: Int, headers: HTTPHeaders, now: Date) -> HTTPResponseVerdict? {
        guard TransferHTTPStatus.isTransient(status) else { return nil }
        let retryAfter = headers.first(name: "Retry-After").flatMap { TransferHeaders.retryAfter($0, now: now) }
        return .transient(reason: "the server answered \(TransferHTTPStatus.describe(status))", retryAfter: retryAfter)
    }

    /// Why a status that is neither a success nor worth retrying ends the transfer.
    private static func refusal(_ status: Int) -> String {
        "the server answered \(TransferHTTPStatus.describe(status))\(TransferHTTPStatus.hint(status))"
    }
}
