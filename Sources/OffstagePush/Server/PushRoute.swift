import Foundation

/// One front door of the gateway: the requests under a path prefix.
///
/// The APNs provider API (`/3/`) is one; Web Push (`/push/`, and its message resources `/m/`) is another. Every route is
/// served over HTTP/2 and HTTP/1.1 alike.
public protocol PushRoute: Sendable {
    /// The path prefix this route serves (the longest matching prefix wins).
    var pathPrefix: String { get }
    /// The largest request body the route reads; a longer one is refused while it arrives, without buffering it.
    var maximumBodyBytes: Int { get }
    /// The response to a request whose body is over ``maximumBodyBytes`` (`request.body` is empty).
    func bodyTooLarge(_ request: PushHTTPRequest) -> PushHTTPResponse
    /// Answers a complete request.
    func handle(_ request: PushHTTPRequest) async -> PushHTTPResponse
}

/// Chooses the route of each request by its path.
public struct PushRouter: Sendable {
    /// The routes, longest prefix first.
    public let routes: [any PushRoute]

    /// Creates a router over `routes`.
    public init(_ routes: [any PushRoute]) {
        self.routes = routes.sorted { $0.pathPrefix.utf8.count > $1.pathPrefix.utf8.count }
    }

    /// The route serving `path`, if any.
    public func route(for path: String) -> (any PushRoute)? {
        routes.first { path.hasPrefix($0.pathPrefix) }
    }

    /// The answer to a path no route serves: 404 `BadPath`, as APNs answers.
    public func notFound(_ request: PushHTTPRequest) -> PushHTTPResponse {
        APNsGateway.response(
            for: APNsRefusal(.badPath, "No front door serves \(request.path); send pushes to /3/device/<device token>."),
            apnsID: APNsRequestRules.responseID(for: request)
        )
    }
}

/// The APNs provider API as a route: `POST /3/device/<token>`.
public struct APNsRoute: PushRoute {
    /// The gateway answering the requests.
    public let gateway: APNsGateway

    /// Creates the route over `gateway`.
    public init(gateway: APNsGateway) {
        self.gateway = gateway
    }

    /// `/3/`: every APNs path, so a wrong one under it is answered by the APNs rules.
    public var pathPrefix: String { "/3/" }

    /// 5120 bytes, the largest payload of any push type (VoIP); the rules check each type's own limit.
    public var maximumBodyBytes: Int { PushType.largestPayloadBytes }

    /// 413 `PayloadTooLarge`.
    public func bodyTooLarge(_ request: PushHTTPRequest) -> PushHTTPResponse {
        APNsGateway.response(
            for: APNsRefusal(
                .payloadTooLarge, "The request body is over \(maximumBodyBytes) bytes; a push payload may carry at most 4096 (5120 for VoIP)."),
            apnsID: APNsRequestRules.responseID(for: request)
        )
    }

    /// Answers with the gateway.
    public func handle(_ request: PushHTTPRequest) async -> PushHTTPResponse {
        await gateway.handle(request)
    }
}
