/// The Web Push push service as a route: `POST /push/<subscription id>`, bodies of at most 4096 bytes.
public struct WebPushRoute: PushRoute {
    /// The gateway answering the requests.
    public let gateway: WebPushGateway

    /// Creates the route over `gateway`.
    public init(gateway: WebPushGateway) {
        self.gateway = gateway
    }

    /// `/push/`.
    public var pathPrefix: String { WebPushRequestRules.pathPrefix }

    /// 4096 bytes, the size RFC 8030 has push services accept.
    public var maximumBodyBytes: Int { WebPushRequestRules.maximumBodyBytes }

    /// 413 `PayloadTooLarge`.
    public func bodyTooLarge(_ request: PushHTTPRequest) -> PushHTTPResponse {
        WebPushRefusal(
            .payloadTooLarge,
            "The body is over \(maximumBodyBytes) bytes; a Web Push message carries at most 3993 bytes of plaintext. Send an id and fetch the rest."
        ).response
    }

    /// Answers with the gateway.
    public func handle(_ request: PushHTTPRequest) async -> PushHTTPResponse {
        await gateway.handle(request)
    }
}

/// The message resources `/m/<message id>` named by a 201's `Location` (RFC 8030 §5).
///
/// RFC 8030 §5.3 lets an application server DELETE a message to cancel it; this gateway does not: a message is
/// delivered or expires with its TTL. Every method on a message id is answered 405 with an empty `Allow`, and a path
/// that is not a message id 404.
public struct WebPushMessageRoute: PushRoute {
    /// Creates the route.
    public init() {}

    /// `/m/`.
    public var pathPrefix: String { "/m/" }

    /// No body is read.
    public var maximumBodyBytes: Int { 0 }

    /// 413 `PayloadTooLarge` (no request to a message resource has a body).
    public func bodyTooLarge(_ request: PushHTTPRequest) -> PushHTTPResponse {
        WebPushRefusal(.payloadTooLarge, "Requests to message resources carry no body.").response
    }

    /// 405 for a message id (nothing may be done with it), 404 for anything else.
    public func handle(_ request: PushHTTPRequest) async -> PushHTTPResponse {
        let id = request.path.dropFirst(pathPrefix.count).prefix { $0 != "?" }
        guard APNsRequestRules.isCanonicalUUID(String(id)) else {
            return WebPushRefusal(.unknownMessage, "The path \(request.path.prefix(200)) names no message; message paths are /m/<id> from a Location.")
                .response
        }
        return WebPushRefusal(
            .methodNotAllowed,
            "Messages cannot be \(request.method == "DELETE" ? "deleted" : "read or changed") on this push service; a message is delivered or expires with its TTL.",
            headers: [PushHeaderField("allow", "")]
        ).response
    }
}
