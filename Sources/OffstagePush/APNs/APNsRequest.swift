import Foundation

/// One header field of a request or response, as it came over HTTP/2 (names are lowercase there).
public struct PushHeaderField: Sendable, Hashable {
    /// The field name, lowercase.
    public var name: String
    /// The field value, as sent.
    public var value: String

    /// Creates a header field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// An HTTP request as the gateway's front doors see it: method, path, regular headers and the whole body, from
/// HTTP/2 or HTTP/1.1 alike.
public struct PushHTTPRequest: Sendable {
    /// `:method` (HTTP/2) or the request line's method (HTTP/1.1).
    public var method: String
    /// `:path`, with any query (HTTP/2), or the request target (HTTP/1.1).
    public var path: String
    /// The regular (non-pseudo) header fields, in order, repeated names kept; names are lowercase.
    public var headers: [PushHeaderField]
    /// The request body.
    public var body: Data
    /// The host (and port, when the client named one) the client addressed: `:authority`, else `Host`; empty when
    /// the request named none.
    public var authority: String
    /// `https` when the request came over TLS, else `http` (what the connection was, not what the client claims).
    public var scheme: String

    /// Creates a request.
    public init(
        method: String, path: String, headers: [PushHeaderField], body: Data, authority: String = "", scheme: String = "http"
    ) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.authority = authority
        self.scheme = scheme
    }

    /// `scheme://authority`: the origin the request reached (empty authority gives `scheme://`).
    public var origin: String { "\(scheme)://\(authority)" }

    /// The values of every field named `name` (lowercase).
    public func values(of name: String) -> [String] {
        headers.compactMap { $0.name == name ? $0.value : nil }
    }
}

/// An HTTP response of a front door.
public struct PushHTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields to send (lowercase names).
    public var headers: [PushHeaderField]
    /// The body (empty for none).
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: [PushHeaderField] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A push request that passed every rule of the provider API: the values the gateway goes on with.
public struct ValidatedPush: Sendable, Hashable {
    /// The notification's id: the request's `apns-id`, or a lowercase UUID generated for it.
    public var apnsID: String
    /// The device token from the path, 64 lowercase hexadecimal digits.
    public var deviceToken: String
    /// `apns-topic` as sent.
    public var topic: String
    /// The app the topic names (the topic without the push type's suffix, such as `.voip`).
    public var app: String
    /// The push type, from `apns-push-type` or inferred from the payload when absent.
    public var pushType: PushType
    /// The priority, from `apns-priority` or the default (10; 5 for background pushes).
    public var priority: PushPriority
    /// When the push stops being worth delivering; nil for `apns-expiration: 0` or none.
    public var expiration: Date?
    /// `apns-expiration: 0`: deliver to a connected device now, or not at all (APNs does not store it).
    public var attemptOnce: Bool
    /// `apns-collapse-id`.
    public var collapseID: String?
    /// The whole payload, verbatim (the app's user info).
    public var payload: Data
    /// The payload's `aps` dictionary, typed.
    public var aps: APS
    /// The provider token (the JWT of `authorization: bearer …`), still to be verified.
    public var providerToken: String
    /// When the request was read.
    public var receivedAt: Date
}
