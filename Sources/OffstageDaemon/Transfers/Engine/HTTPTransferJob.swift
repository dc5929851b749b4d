import OffstageCore

/// One attempt of a background transfer, as the daemon hands it to ``HTTPTransferEngine`` (SPEC TR-1, TR-4): where,
/// how, and which file. What runs and when (retries, backoff, conditions) is decided elsewhere; a job is one request
/// (two when the answer to a resume calls for another, see ``HTTPTransferEngine``).
struct HTTPTransferJob: Sendable {
    /// The file side of the transfer.
    enum Body: Sendable {
        /// Download into `partFile` (created with mode 0600 if missing), keeping its first `resumeFrom` bytes when
        /// the server can send the rest of the same version (`validator`, from the response they came from). A part
        /// file shorter than `resumeFrom` resumes from its real size; bytes past `resumeFrom` are cut off.
        case download(partFile: String, resumeFrom: Int64, validator: TransferValidator?)
        /// Send the whole of `file` as the request body, with its size as Content-Length.
        case upload(file: String)
    }

    /// An `http` or `https` URL; anything else ends the job as ``HTTPTransferOutcome/permanent(status:reason:bytesDone:)``.
    var url: String
    /// `GET` for downloads; `PUT` or `POST` (or any method the server accepts) for uploads.
    var method: String
    /// The app's request headers. Range, If-Range, Content-Length and Transfer-Encoding are the engine's: the app's
    /// are dropped.
    var headers: [(name: String, value: String)]
    /// The file side.
    var body: Body
    /// A ``HTTPTransferEvent/checkpoint(bytesDone:expectedTotal:)`` is reported each time the bytes written (downloads,
    /// counted from the part file's start) or sent (uploads) pass a multiple of this size.
    var checkpointBytes: Int64 = 1 << 20
    /// When set, a download never writes more than ``checkpointBytes`` past the last checkpoint its ``CheckpointGate``
    /// says is journaled: the daemon confirms each checkpoint, so a crash loses at most one checkpoint of bytes.
    /// Without one (tools, the engine's own tests) nothing holds the download back.
    var gate: CheckpointGate?
    /// Seconds without a byte received or sent (the connection being made included) after which the attempt ends as
    /// ``HTTPTransferOutcome/transient(reason:retryAfter:bytesDone:validator:)``.
    var idleTimeout: Double = 60
    /// The most of an upload's 2xx response body kept (``HTTPTransferOutcome/completed(status:bytes:validator:mimeType:suggestedFilename:responseBody:)``);
    /// a longer body is cut here, marked truncated, and not read further (the connection is closed).
    var responseBodyLimit: Int = TransferLimits().maximumResponseBodyBytes

    /// A job with the default checkpoint size and idle timeout.
    init(url: String, method: String, headers: [(name: String, value: String)] = [], body: Body) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }

    /// A download (`GET`) of `url` into `partFile`.
    static func download(
        _ url: String, to partFile: String, resumeFrom: Int64 = 0, validator: TransferValidator? = nil,
        headers: [(name: String, value: String)] = []
    ) -> HTTPTransferJob {
        HTTPTransferJob(url: url, method: "GET", headers: headers, body: .download(partFile: partFile, resumeFrom: resumeFrom, validator: validator))
    }

    /// An upload of `file` to `url` with `method`.
    static func upload(
        _ file: String, to url: String, method: String = "PUT", headers: [(name: String, value: String)] = []
    ) -> HTTPTransferJob {
        HTTPTransferJob(url: url, method: method, headers: headers, body: .upload(file: file))
    }
}
