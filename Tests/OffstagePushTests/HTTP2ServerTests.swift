import Foundation
import Testing

@testable import OffstagePush

/// The gateway over real HTTP/2 on loopback, with the provider client (SPEC NT-3).
@Suite("HTTP/2 gateway server (NT-3)")
struct HTTP2ServerTests {
    private func notification(token: String = Fixture.token, apnsID: String? = nil) -> APNsNotification {
        APNsNotification(deviceToken: token, topic: Fixture.app, payload: Fixture.alertPayload, pushType: .alert, apnsID: apnsID)
    }

    @Test("A push over h2c with prior knowledge is accepted 200 with its apns-id and stored (NT-3)")
    func h2c() async throws {
        try await withGateway { running in
            let client = try await running.client()
            let id = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
            let response = try await client.send(notification(apnsID: id))
            #expect(response.status == 200)
            #expect(response.apnsID == id)
            #expect(response.reason == nil)
            let generated = try await client.send(notification())
            #expect(generated.status == 200)
            let generatedID = try #require(generated.apnsID)
            #expect(APNsRequestRules.isCanonicalUUID(generatedID) && generatedID == generatedID.lowercased())
            #expect(await running.backend.accepted.map(\.apnsID) == [id, generatedID])
            await client.close()
        }
    }

    @Test("A push over TLS with ALPN h2 and a certificate from a throw-away CA is accepted (NT-3)")
    func tls() async throws {
        try await withGateway(tls: true) { running in
            let client = try await running.client()
            let response = try await client.send(notification())
            #expect(response.status == 200)
            #expect(await running.backend.accepted.count == 1)
            await client.close()
        }
    }

    @Test("A VoIP payload of 5120 bytes passes the server's body limit; 5121 bytes are refused 413 as they arrive (NT-3)")
    func voipOverTheWire() async throws {
        try await withGateway { running in
            let client = try await running.client()
            var voip = APNsNotification(
                deviceToken: Fixture.token, topic: "\(Fixture.app).voip", payload: Fixture.payload(size: 5120), pushType: .voip)
            #expect(try await client.send(voip).status == 200)
            voip.payload = Fixture.payload(size: 5121)
            let refused = try await client.send(voip)
            #expect(refused.status == 413)
            #expect(refused.apnsReason == .payloadTooLarge)
            #expect(await running.backend.accepted.map(\.pushType) == [.voip])
            await client.close()
        }
    }

    @Test("A request whose body is followed by trailers is read whole and accepted (NT-3)")
    func trailers() async throws {
        try await withGateway { running in
            let client = try await running.client()
            let response = try await client.send(
                method: "POST", path: "/3/device/\(Fixture.token)", headers: [PushHeaderField("apns-topic", Fixture.app)],
                body: Fixture.alertPayload, trailers: [PushHeaderField("x-checksum", "1")])
            #expect(response.status == 200)
            #expect(await running.backend.accepted.map(\.payload) == [Fixture.alertPayload])
            await client.close()
        }
    }

    @Test("A client that does not trust the gateway's certificate cannot send (NT-3)")
    func untrustedCertificate() async throws {
        try await withGateway(tls: true) { running in
            // TCP connects; the TLS handshake after it fails, and with it the push.
            let client = try await running.client(trustAuthority: false)
            await #expect(throws: (any Error).self) { _ = try await client.send(notification()) }
            await client.close()
            #expect(await running.backend.accepted.isEmpty)
        }
    }

    @Test("Bad requests over the wire get APNs statuses and reasons, and the backend stays untouched (NT-3)")
    func badInputs() async throws {
        try await withGateway { running in
            let client = try await running.client()
            let anonymous = try await running.client(credentials: false)
            let topic = [PushHeaderField("apns-topic", Fixture.app)]
            let stale = "bearer " + (try await Fixture.providerToken(issuedAt: Date() - 7200))
            let cases: [(APNsProviderClient, String, String, [PushHeaderField], Data, Int, String)] = [
                (client, "POST", "/nowhere", topic, Fixture.alertPayload, 404, "BadPath"),
                (client, "POST", "/3/nowhere", topic, Fixture.alertPayload, 404, "BadPath"),
                (client, "GET", "/3/device/\(Fixture.token)", topic, Data(), 405, "MethodNotAllowed"),
                (client, "POST", "/3/device/", topic, Fixture.alertPayload, 400, "MissingDeviceToken"),
                (client, "POST", "/3/device/1234", topic, Fixture.alertPayload, 400, "BadDeviceToken"),
                (client, "POST", "/3/device/\(Fixture.otherToken)", topic, Fixture.alertPayload, 400, "BadDeviceToken"),
                (client, "POST", "/3/device/\(Fixture.token)", [], Fixture.alertPayload, 400, "MissingTopic"),
                (client, "POST", "/3/device/\(Fixture.token)", topic + topic, Fixture.alertPayload, 400, "DuplicateHeaders"),
                (client, "POST", "/3/device/\(Fixture.token)", topic, Data(), 400, "PayloadEmpty"),
                (client, "POST", "/3/device/\(Fixture.token)", topic, Data("[]".utf8), 400, "PayloadEmpty"),
                (client, "POST", "/3/device/\(Fixture.token)", topic, Fixture.payload(size: 4097), 413, "PayloadTooLarge"),
                (anonymous, "POST", "/3/device/\(Fixture.token)", topic, Fixture.alertPayload, 403, "MissingProviderToken"),
                (anonymous, "POST", "/3/device/\(Fixture.token)", topic + [PushHeaderField("authorization", stale)],
                 Fixture.alertPayload, 403, "ExpiredProviderToken"),
                (anonymous, "POST", "/3/device/\(Fixture.token)", topic + [PushHeaderField("authorization", "bearer x.y.z")],
                 Fixture.alertPayload, 403, "InvalidProviderToken"),
            ]
            for (sender, method, path, headers, body, status, reason) in cases {
                let response = try await sender.send(method: method, path: path, headers: headers, body: body)
                #expect(response.status == status, "\(method) \(path) \(reason)")
                #expect(response.reason == reason, "\(method) \(path)")
                #expect(response.apnsID.map(APNsRequestRules.isCanonicalUUID) == true)
            }
            #expect(await running.backend.accepted.isEmpty)
            await client.close()
            await anonymous.close()
        }
    }

    @Test("A 10 MB body is refused 413 PayloadTooLarge as it arrives, nothing is stored, and the connection goes on (NT-3)",
          arguments: [false, true])
    func hugeBody(declaresLength: Bool) async throws {
        try await withGateway { running in
            let client = try await running.client()
            let huge = Data(repeating: UInt8(ascii: "x"), count: 10 * 1024 * 1024)
            var headers = [PushHeaderField("apns-topic", Fixture.app)]
            if declaresLength { headers.append(PushHeaderField("content-length", String(huge.count))) }
            let response = try await client.send(method: "POST", path: "/3/device/\(Fixture.token)", headers: headers, body: huge)
            #expect(response.status == 413)
            #expect(response.reason == "PayloadTooLarge")
            #expect(await running.backend.accepted.isEmpty)
            #expect(try await client.send(notification()).status == 200)
            await client.close()
        }
    }

    @Test("Garbage bytes close only their own connection; other connections and new ones are served (NT-3)",
          arguments: [
            // HTTP/1.1 is served beside HTTP/2; a request it cannot parse is answered 400 and its connection closed.
            Array("GET / HTTP/1.1\r\nHost: gateway\r\nContent-Length: many\r\n\r\n".utf8),
            Array("PRI * HTTP/2.0\r\n\r\nXM\r\n\r\n".utf8) + [0, 0, 4, 9, 9, 9, 9, 9, 9, 1, 2, 3, 4],
            (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) },
          ])
    func garbage(bytes: [UInt8]) async throws {
        for tls in [false, true] {
            try await withGateway(tls: tls) { running in
                let before = try await running.client()
                #expect(try await before.send(notification()).status == 200)
                #expect(try serverClosesConnection(port: running.port, after: bytes))
                #expect(try await before.send(notification()).status == 200)
                let after = try await running.client()
                #expect(try await after.send(notification()).status == 200)
                #expect(await running.backend.accepted.count == 3)
                await before.close()
                await after.close()
            }
        }
    }

    @Test("500 concurrent streams on one connection are all accepted with distinct apns-ids (NT-3)")
    func concurrentStreams() async throws {
        try await withGateway { running in
            let tokens = (0..<5).map(Fixture.token)
            for token in tokens {
                await running.backend.register(token: token, app: Fixture.app, device: Fixture.device)
            }
            let client = try await running.client()
            let responses = try await withThrowingTaskGroup(of: APNsResponse.self) { group in
                for index in 0..<500 {
                    let push = notification(token: tokens[index % tokens.count])
                    group.addTask { try await client.send(push) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.count == 500)
            #expect(responses.allSatisfy { $0.status == 200 })
            let ids = Set(responses.compactMap(\.apnsID))
            #expect(ids.count == 500)
            #expect(Set(await running.backend.accepted.map(\.apnsID)) == ids)
            // The connection survives: the client does not reset finished streams (a server drops a connection that
            // sends hundreds of RST_STREAM frames).
            #expect(client.isConnected)
            #expect(try await client.send(notification(token: tokens[0])).status == 200)
            await client.close()
        }
    }

    @Test("Pushes over the per-token limit are answered 429 TooManyRequests over the wire (NT-3)")
    func rateLimited() async throws {
        try await withGateway(configuration: .init(rateLimit: .init(ratePerSecond: 0.001, burst: 2))) { running in
            let client = try await running.client()
            #expect(try await client.send(notification()).status == 200)
            #expect(try await client.send(notification()).status == 200)
            let limited = try await client.send(notification())
            #expect(limited.status == 429)
            #expect(limited.apnsReason == .tooManyRequests)
            #expect(await running.backend.accepted.count == 2)
            await client.close()
        }
    }

    @Test("Shutdown stops new connections but lets an in-flight push finish and be answered 200 (NT-3)")
    func gracefulShutdown() async throws {
        let backend = RecordingBackend()
        await backend.add(Fixture.key)
        await backend.register(token: Fixture.token, app: Fixture.app, device: Fixture.device)
        let server = PushGatewayServer(
            configuration: .init(port: 0), router: PushRouter([APNsRoute(gateway: APNsGateway(backend: backend))]))
        try await server.start()
        let port = try #require(server.port)
        let client = try await APNsProviderClient.connect(
            .init(
                host: "127.0.0.1", port: port,
                credentials: .init(keyID: Fixture.keyID, teamID: Fixture.team, privateKeyPEM: Fixture.keyPair.privateKeyPEM)))
        await backend.holdAccepts()
        let push = notification()
        let inFlight = Task { try await client.send(push) }
        await backend.waitForHeldAccept()
        let stopping = Task { await server.shutdown() }
        while server.isAcceptingConnections { await Task.yield() }
        await #expect(throws: (any Error).self) {
            _ = try await APNsProviderClient.connect(.init(host: "127.0.0.1", port: port))
        }
        await backend.releaseAccepts()
        #expect(try await inFlight.value.status == 200)
        await stopping.value
        #expect(server.connectionCount == 0)
        await #expect(throws: PushGatewayServerError.self) { try await server.start() }
        #expect(await backend.accepted.count == 1)
        await client.close()
    }
}
