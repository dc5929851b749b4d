import Foundation

/// What a background transfer moves (SPEC TR-1).
public enum TransferKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// Bytes from the server into a file the daemon hands the app when done.
    case download
    /// Bytes from a file of the app's to the server.
    case upload
}

/// What identifies the version of a resource on the server, sent back with `If-Range` so a download resumes only
/// against the same version (SPEC TR-4).
public struct TransferValidator: Hashable, Sendable, Codable {
    /// The `ETag` the server gave, quotes and `W/` included.
    public var etag: String?
    /// The `Last-Modified` the server gave, as it gave it.
    public var lastModified: String?

    /// A validator from the response's headers.
    public init(etag: String?, lastModified: String?) {
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// What an app asked to transfer: fixed once the task exists.
public struct TransferRequest: Hashable, Sendable, Codable {
    /// Download or upload.
    public var kind: TransferKind
    /// An absolute `http` or `https` URL.
    public var url: String
    /// `GET` for downloads; `PUT` or `POST` for uploads.
    public var method: String
    /// The app's request headers, in order.
    public var headers: [TransferHeader]
    /// For an upload: the file the daemon keeps for it (its own copy or link, made when the task was created).
    public var uploadFile: String?
    /// The task waits for good conditions: an unmetered network and external power (SPEC TR-5).
    public var discretionary: Bool
    /// It does not start before this (SPEC TR-5).
    public var earliestBegin: Instant?
    /// The name the finished file gets in the app's folder (a download), from the URL unless the app gave one.
    public var filename: String

    /// A request.
    public init(
        kind: TransferKind, url: String, method: String? = nil, headers: [TransferHeader] = [], uploadFile: String? = nil,
        discretionary: Bool = false, earliestBegin: Instant? = nil, filename: String
    ) {
        self.kind = kind
        self.url = url
        self.method = method ?? (kind == .download ? "GET" : "PUT")
        self.headers = headers
        self.uploadFile = uploadFile
        self.discretionary = discretionary
        self.earliestBegin = earliestBegin
        self.filename = filename
    }
}

/// One request header of a transfer.
public struct TransferHeader: Hashable, Sendable, Codable {
    /// Its name, as the app wrote it.
    public var name: String
    /// Its value.
    public var value: String

    /// A header.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// Where a transfer stands.
public enum TransferState: String, Hashable, Sendable, Codable, CaseIterable {
    /// Not running: waiting for its conditions, a slot, its earliest begin date or its next retry.
    case waiting
    /// Bytes are moving.
    case running
    /// Paused by the app or by hand (`offstage transfers pause`); resumed only by the same means.
    case paused
    /// Done: the download's file is in the app's folder, or the upload's server answered 2xx.
    case completed
    /// Ended with an error (a permanent HTTP status, cancelled, force-quit, timed out).
    case failed

    /// Whether the task has ended and only its event is left to hand to the app.
    public var isFinished: Bool { self == .completed || self == .failed }
}

/// Why a transfer ended without completing.
public struct TransferFailure: Hashable, Sendable, Codable {
    /// The kind of failure, a stable name for apps and scripts.
    public enum Code: String, Hashable, Sendable, Codable {
        /// The server answered a status that retrying will not change (4xx); `status` holds it.
        case httpStatus = "http-status"
        /// The URL, the scheme or the request cannot work.
        case badRequest = "bad-request"
        /// The app (or `offstage transfers cancel`) cancelled it.
        case cancelled
        /// The user force-quit the app (SPEC TR-2).
        case forceQuit = "force-quit"
        /// No byte moved for longer than the resource timeout.
        case timedOut = "timed-out"
        /// The upload's file could not be read, or the download could not be written, and retrying did not help.
        case file
    }

    /// The kind.
    public var code: Code
    /// The HTTP status, for `httpStatus`.
    public var status: Int?
    /// For people.
    public var message: String

    /// A failure.
    public init(_ code: Code, status: Int? = nil, _ message: String) {
        self.code = code
        self.status = status
        self.message = message
    }
}

/// The body of the server's 2xx answer to an upload, which the app receives with the task's completion (the
/// platform's `urlSession(_:dataTask:didReceive:)`), kept up to ``TransferLimits/maximumResponseBodyBytes``
/// (decision 0041).
public struct TransferResponseBody: Hashable, Sendable, Codable {
    /// The bytes kept: the whole body, or its first bytes when ``truncated``.
    public var data: Data
    /// The server sent more than the cap: ``data`` is its beginning and the rest was not read.
    public var truncated: Bool

    /// A body.
    public init(_ data: Data, truncated: Bool = false) {
        self.data = data
        self.truncated = truncated
    }
}

/// One background transfer of one app's session, as the core keeps it and the store journals it (SPEC §5).
public struct TransferTask: Hashable, Sendable, Codable, Identifiable {
    /// Unique on the device, never reused (the core's numbers).
    public var id: UInt64
    /// The app it belongs to.
    public var app: AppID
    /// The identifier of the app's background session.
    public var session: String
    /// What the app asked.
    public var request: TransferRequest
    /// Where it stands.
    public var state: TransferState
    /// Bytes written to the part file (a download) or sent (an upload), as of the last checkpoint.
    public var bytesDone: Int64 = 0
    /// The size the server announced, when it did.
    public var bytesExpected: Int64?
    /// The version of the resource the bytes came from.
    public var validator: TransferValidator?
    /// Failed attempts in a row without progress, for the backoff.
    public var attempts: Int = 0
    /// The next attempt waits until then (a transient failure, or `Retry-After`).
    public var retryAt: Instant?
    /// The last transient failure, for `offstage transfers` and `explain`.
    public var lastError: String?
    /// The attempt in flight, counted from 1; reports of older attempts are ignored.
    public var attempt: UInt64 = 0
    /// When the app created it.
    public var createdAt: Instant
    /// When bytes last moved (or it was created), for the resource timeout.
    public var progressAt: Instant
    /// When it finished.
    public var finishedAt: Instant?
    /// Why it failed, when it did.
    public var failure: TransferFailure?
    /// The HTTP status of the final response, when there was one.
    public var httpStatus: Int?
    /// Whether it was running when the daemon stopped (or crashed): it resumes from its checkpoint.
    public var interrupted: Bool = false
    /// A completed upload's response body, when the server sent one; given to the app with the task's event. The
    /// store keeps it in a column of its own, not in the task's JSON.
    public var responseBody: TransferResponseBody?

    /// A task just created.
    public init(id: UInt64, app: AppID, session: String, request: TransferRequest, at now: Instant) {
        self.id = id
        self.app = app
        self.session = session
        self.request = request
        self.state = .waiting
        self.createdAt = now
        self.progressAt = now
    }
}
