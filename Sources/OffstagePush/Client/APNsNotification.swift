import Foundation

/// A push as an app server sends it: the device token, the `apns-*` headers and the payload.
public struct APNsNotification: Sendable, Hashable {
    /// The device token (64 hexadecimal digits).
    public var deviceToken: String
    /// `apns-topic`: the app's bundle identifier (with the push type's suffix where it has one).
    public var topic: String
    /// The JSON payload.
    public var payload: Data
    /// `apns-push-type`; nil sends none (the gateway infers alert or background).
    public var pushType: PushType?
    /// `apns-priority`; nil sends none.
    public var priority: PushPriority?
    /// `apns-expiration` in UNIX seconds (0: do not store); nil sends none.
    public var expiration: Int64?
    /// `apns-collapse-id`.
    public var collapseID: String?
    /// `apns-id`; nil lets the gateway generate one.
    public var apnsID: String?

    /// Creates a notification.
    public init(
        deviceToken: String, topic: String, payload: Data, pushType: PushType? = nil, priority: PushPriority? = nil,
        expiration: Int64? = nil, collapseID: String? = nil, apnsID: String? = nil
    ) {
        self.deviceToken = deviceToken
        self.topic = topic
        self.payload = payload
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    /// The request headers for this notification (without `authorization`).
    public var headers: [PushHeaderField] {
        var headers = [PushHeaderField(APNsHeaderName.topic, topic)]
        if let pushType { headers.append(PushHeaderField(APNsHeaderName.pushType, pushType.rawValue)) }
        if let priority { headers.append(PushHeaderField(APNsHeaderName.priority, String(priority.rawValue))) }
        if let expiration { headers.append(PushHeaderField(APNsHeaderName.expiration, String(expiration))) }
        if let collapseID { headers.append(PushHeaderField(APNsHeaderName.collapseID, collapseID)) }
        if let apnsID { headers.append(PushHeaderField(APNsHeaderName.id, apnsID)) }
        return headers
    }

    /// `/3/device/<token>`.
    public var path: String { "\(APNsRequestRules.pathPrefix)/\(deviceToken)" }
}

/// The gateway's (or APNs') answer to one push.
public struct APNsResponse: Sendable, Hashable {
    /// The HTTP status: 200 when the push was accepted.
    public var status: Int
    /// The `apns-id` response header.
    public var apnsID: String?
    /// The `reason` of the error body, as sent.
    public var reason: String?
    /// The `timestamp` of an `Unregistered` error body.
    public var timestamp: Date?
    /// The response body.
    public var body: Data

    /// Creates a response.
    public init(status: Int, apnsID: String?, reason: String?, timestamp: Date?, body: Data) {
        self.status = status
        self.apnsID = apnsID
        self.reason = reason
        self.timestamp = timestamp
        self.body = body
    }

    /// The reason as a known APNs reason (nil on success or for an unknown string).
    public var apnsReason: APNsReason? { reason.flatMap(APNsReason.init(rawValue:)) }

    /// Reads the status, `apns-id` and error body of an HTTP response.
    init(status: Int, apnsID: String?, body: Data) {
        struct ErrorBody: Decodable {
            var reason: String?
            var timestamp: Double?
        }
        let decoded = body.isEmpty ? nil : try? JSONDecoder().decode(ErrorBody.self, from: body)
        self.init(
            status: status, apnsID: apnsID, reason: decoded?.reason,
            timestamp: decoded?.timestamp.map { Date(timeIntervalSince1970: $0 / 1000) }, body: body)
    }
}

/// Why the provider client could not send.
public struct ProviderClientError: Error, CustomStringConvertible {
    /// What went wrong and what to do.
    public var description: String
}
