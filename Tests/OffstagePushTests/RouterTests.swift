import Foundation
import Testing

@testable import OffstagePush

/// The router: front doors by path prefix, each with its own body limit (SPEC NT-3; Web Push will be one).
@Suite("Router (NT-3)")
struct RouterTests {
    /// A second front door: answers 201 with the body's length, reads at most 16 bytes.
    struct EchoRoute: PushRoute {
        var pathPrefix: String { "/push/" }
        var maximumBodyBytes: Int { 16 }
        func bodyTooLarge(_ request: PushHTTPRequest) -> PushHTTPResponse { PushHTTPResponse(status: 413) }
        func handle(_ request: PushHTTPRequest) async -> PushHTTPResponse {
            PushHTTPResponse(status: 201, headers: [PushHeaderField("x-length", String(request.body.count))], body: request.body)
        }
    }

    @Test("The longest matching prefix wins and unmatched paths are 404 BadPath (NT-3)")
    func choosing() async {
        let (gateway, _) = await Fixture.gateway()
        let router = PushRouter([APNsRoute(gateway: gateway), EchoRoute()])
        #expect(router.route(for: "/push/abc") is EchoRoute)
        #expect(router.route(for: "/3/device/x") is APNsRoute)
        #expect(router.route(for: "/push") == nil)
        let notFound = router.notFound(Fixture.request(path: "/elsewhere"))
        #expect(notFound.status == 404)
        #expect(notFound.body == Data(#"{"reason":"BadPath"}"#.utf8))
    }

    @Test("Two front doors share one server, each with its own body limit (NT-3)")
    func twoRoutes() async throws {
        let (gateway, backend) = await Fixture.gateway(now: { Date() })
        let server = PushGatewayServer(configuration: .init(port: 0), router: PushRouter([APNsRoute(gateway: gateway), EchoRoute()]))
        try await server.start()
        let client = try await APNsProviderClient.connect(
            .init(
                host: "127.0.0.1", port: try #require(server.port),
                credentials: .init(keyID: Fixture.keyID, teamID: Fixture.team, privateKeyPEM: Fixture.keyPair.privateKeyPEM)))
        let echoed = try await client.send(method: "POST", path: "/push/sub-1", headers: [], body: Data("hello".utf8))
        #expect(echoed.status == 201)
        #expect(echoed.body == Data("hello".utf8))
        let tooLong = try await client.send(method: "POST", path: "/push/sub-1", headers: [], body: Data(count: 17))
        #expect(tooLong.status == 413)
        let push = APNsNotification(deviceToken: Fixture.token, topic: Fixture.app, payload: Fixture.alertPayload)
        #expect(try await client.send(push).status == 200)
        #expect(await backend.accepted.count == 1)
        await client.close()
        await server.shutdown()
    }
}
