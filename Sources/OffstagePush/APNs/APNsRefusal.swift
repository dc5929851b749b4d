import Foundation

/// Why the gateway refused a push: an APNs reason, what exactly was wrong (for logs and tests), and for 410
/// `Unregistered` the time the token stopped being valid.
public struct APNsRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The APNs reason, which decides the status code and the `reason` of the error body.
    public var reason: APNsReason
    /// What was wrong and how to fix it. It is not sent to the client (APNs bodies carry only the reason), but it is
    /// logged and shown by ``description``.
    public var detail: String
    /// For `Unregistered`: when the device token was revoked (sent as `timestamp`, milliseconds since the epoch).
    public var timestamp: Date?

    /// Creates a refusal.
    public init(_ reason: APNsReason, _ detail: String, timestamp: Date? = nil) {
        self.reason = reason
        self.detail = detail
        self.timestamp = timestamp
    }

    /// The HTTP status code of the response.
    public var status: Int { reason.status }

    /// The JSON error body, exactly as APNs writes it: `{"reason":"…"}`, with `"timestamp"` for `Unregistered`.
    public var body: Data { APNsRefusal.body(reason: reason, timestamp: timestamp) }

    /// The JSON error body for `reason` (and `timestamp`, in milliseconds since the epoch, when given).
    public static func body(reason: APNsReason, timestamp: Date? = nil) -> Data {
        // Reasons are ASCII letters, so no escaping is needed.
        if let timestamp {
            let milliseconds = Int64((timestamp.timeIntervalSince1970 * 1000).rounded(.down))
            return Data(#"{"reason":"\#(reason.rawValue)","timestamp":\#(milliseconds)}"#.utf8)
        }
        return Data(#"{"reason":"\#(reason.rawValue)"}"#.utf8)
    }

    /// `"<status> <Reason>: <detail>"`.
    public var description: String { "\(status) \(reason.rawValue): \(detail)" }
}
