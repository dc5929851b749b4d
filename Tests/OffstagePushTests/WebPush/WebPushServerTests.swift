import Foundation
import NIOCore
import Testing

@testable import OffstagePush

/// A gateway server with the APNs and Web Push front doors, on a loopback port, with both backends.
struct RunningWebPushServer {
    let server: PushGatewayServer
    let backend: RecordingBackend
    let apnsBackend: RecordingBackend
    let port: Int
    let certificates: TestCertificates?
}

/// Runs `body` against a server serving `/3/`, `/push/` and `/m/` (TLS when asked), then shuts it down.
func withWebPushServer(
    tls: Bool = false, configuration: WebPushGatewayConfiguration = .init(), maximumIdleTime: TimeAmount? = nil,
    _ body: (RunningWebPushServer) async throws -> Void
) async throws {
    let backend = RecordingBackend()
    await backend.add(WebPushFixture.deviceSubscription)
    await backend.add(WebPushFixture.openSubscription)
    let apnsBackend = RecordingBackend()
    await apnsBackend.add(Fixture.key)
    await apnsBackend.register(token: Fixture.token, app: Fixture.app, device: Fixture.device)
    let certificates = tls ? try TestCertificates.make() : nil
    let router = PushRouter([
        APNsRoute(gateway: APNsGateway(backend: apnsBackend)), WebPushRoute(gateway: WebPushGateway(backend: backend, configuration: configuration)),
        WebPushMessageRoute(),
    ])
    let server = PushGatewayServer(
        configuration: .init(
            port: 0, tls: certificates.map { .init(certificateChainPEM: $0.serverChainPEM, privateKeyPEM: $0.serverKeyPEM) },
            maximumIdleTime: maximumIdleTime),
        router: router)
    try await server.start()
    let running = RunningWebPushServer(
        server: server, backend: backend, apnsBackend: apnsBackend, port: try #require(server.port), certificates: certificates)
    do {
        try await body(running)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

/// Web Push over HTTP/1.1 on a real socket, beside HTTP/2 on the same port (SPEC NT-3).
@Suite("Web Push over HTTP/1.1 and HTTP/2 (NT-3)")
struct WebPushServerTests {
    private func vapid(audience: String = "http://push.test") async throws -> String {
        try await WebPushFixture.vapid(audience: audience, expiration: Date() + 3600)
    }

    @Test("Two messages on one kept-alive HTTP/1.1 connection are decrypted, stored and answered 201 (NT-3)")
    func keepAlive() async throws {
        try await withWebPushServer { running in
            let client = try RawHTTP1Client(port: running.port)
            try await client.send("POST", "/push/\(WebPushFixture.openID)", headers: [("TTL", "30"), ("Urgency", "low")])
            let first = try await client.readResponse()
            #expect(first.status == 201)
            #expect(first.headers["ttl"] == "30")
            let location = try #require(first.headers["location"])
            #expect(location.hasPrefix("http://push.test/m/"))
            try await client.send(
                "POST", "/push/\(WebPushFixture.deviceID)",
                headers: [("TTL", "60"), ("Content-Encoding", "aes128gcm"), ("Authorization", try await vapid())],
                body: try WebPushFixture.encrypted("over HTTP/1.1"))
            let second = try await client.readResponse()
            #expect(second.status == 201, "\(String(decoding: second.body, as: UTF8.self))")
            let stored = await running.backend.accepted
            #expect(stored.count == 2)
            #expect(location == "http://push.test/m/\(stored[0].apnsID)")
            #expect(try WebPushMessage(payload: stored[1].payload).text == "over HTTP/1.1")
        }
    }

    @Test("Refusals over HTTP/1.1 carry status, JSON reason, and keep the connection (NT-3)")
    func refusalsKeepTheConnection() async throws {
        try await withWebPushServer { running in
            let client = try RawHTTP1Client(port: running.port)
            try await client.send("POST", "/push/\(WebPushFixture.openID)")
            let missingTTL = try await client.readResponse()
            #expect(missingTTL.status == 400 && missingTTL.reason == "MissingTTL")
            #expect(missingTTL.headers["content-type"] == "application/json")
            try await client.send("POST", "/push/\(WebPushFixture.deviceID)", headers: [("TTL", "1")])
            #expect(try await client.readResponse().status == 401)
            try await client.send("GET", "/")
            let notFound = try await client.readResponse()
            #expect(notFound.status == 404)
            try await client.send("DELETE", "/m/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
            #expect(try await client.readResponse().status == 405)
            try await client.send("POST", "/push/\(WebPushFixture.openID)", headers: [("TTL", "1")])
            #expect(try await client.readResponse().status == 201)
            #expect(await running.backend.accepted.count == 1)
        }
    }

    @Test("Connection: close is honoured: the response says so and the server closes (NT-3)")
    func connectionClose() async throws {
        try await withWebPushServer { running in
            let client = try RawHTTP1Client(port: running.port)
            try await client.send("POST", "/push/\(WebPushFixture.openID)", headers: [("TTL", "1"), ("Connection", "close")])
            let response = try await client.readResponse()
            #expect(response.status == 201)
            #expect(response.headers["connection"] == "close")
            #expect(try await client.serverClosed())
        }
    }

    @Test("A body over 4096 bytes is refused 413 as it arrives, declared or chunked, then the connection closes (NT-3)",
          arguments: [true, false])
    func oversized(declared: Bool) async throws {
        try await withWebPushServer { running in
            let client = try RawHTTP1Client(port: running.port)
            let head: String
            if declared {
                head = "POST /push/\(WebPushFixture.openID) HTTP/1.1\r\nHost: push.test\r\nTTL: 1\r\nContent-Encoding: aes128gcm\r\nContent-Length: 10485760\r\n\r\n"
                try await client.write(Data(head.utf8) + Data(count: 1000))
            } else {
                head = "POST /push/\(WebPushFixture.openID) HTTP/1.1\r\nHost: push.test\r\nTTL: 1\r\nContent-Encoding: aes128gcm\r\nTransfer-Encoding: chunked\r\n\r\n"
                let chunk = Data("1000\r\n".utf8) + Data(count: 4096) + Data("\r\n".utf8)
                try await client.write(Data(head.utf8) + chunk + chunk)
            }
            let response = try await client.readResponse()
            #expect(response.status == 413 && response.reason == "PayloadTooLarge")
            #expect(response.headers["connection"] == "close")
            #expect(try await client.serverClosed())
            #expect(await running.backend.accepted.isEmpty)
        }
    }

    @Test("Expect: 100-continue is answered 100 before the body is sent, then the message is accepted (NT-3)")
    func expectContinue() async throws {
        try await withWebPushServer { running in
            let client = try RawHTTP1Client(port: running.port)
            let body = try WebPushFixture.encrypted("after continue")
            let head = "POST /push/\(WebPushFixture.openID) HTTP/1.1\r\nHost: push.test\r\nTTL: 1\r\nContent-Encoding: aes128gcm\r\n"
                + "Expect: 100-continue\r\nContent-Length: \(body.count)\r\n\r\n"
            try await client.write(Data(head.utf8))
            #expect(try await client.readResponse(informational: true).status == 100)
            try await client.write(body)
            #expect(try await client.readResponse().status == 201)
            #expect(await running.backend.accepted.count == 1)
        }
    }

    @Test("With an idle limit, a connection that sends nothing, or nothing after its last answer, is closed (NT-3)")
    func idleConnections() async throws {
        try await withWebPushServer(maximumIdleTime: .milliseconds(100)) { running in
            let silent = try RawHTTP1Client(port: running.port)
            #expect(try await silent.serverClosed())
            let done = try RawHTTP1Client(port: running.port)
            try await done.send("POST", "/push/\(WebPushFixture.openID)", headers: [("TTL", "1")])
            #expect(try await done.readResponse().status == 201)
            #expect(try await done.serverClosed())
        }
    }

    @Test("Shutdown lets a message in flight over HTTP/1.1 be stored and answered 201, then closes its connection (NT-3)")
    func gracefulShutdown() async throws {
        let backend = RecordingBackend()
        await backend.add(WebPushFixture.openSubscription)
        let server = PushGatewayServer(
            configuration: .init(port: 0), router: PushRouter([WebPushRoute(gateway: WebPushGateway(backend: backend))]))
        try await server.start()
        let client = try RawHTTP1Client(port: try #require(server.port))
        await backend.holdAccepts()
        try await client.send("POST", "/push/\(WebPushFixture.openID)", headers: [("TTL", "1")])
        await backend.waitForHeldAccept()
        let stopping = Task { await server.shutdown() }
        while server.isAcceptingConnections { await Task.yield() }
        await backend.releaseAccepts()
        #expect(try await client.readResponse().status == 201)
        #expect(try await client.serverClosed())
        await stopping.value
        #expect(server.connectionCount == 0)
        #expect(await backend.accepted.count == 1)
    }

    @Test("HTTP/2 on the same port serves APNs and Web Push alike (NT-3)")
    func http2Beside() async throws {
        try await withWebPushServer { running in
            let client = try await APNsProviderClient.connect(
                .init(
                    host: "127.0.0.1", port: running.port,
                    credentials: .init(keyID: Fixture.keyID, teamID: Fixture.team, privateKeyPEM: Fixture.keyPair.privateKeyPEM)))
            let push = APNsNotification(deviceToken: Fixture.token, topic: Fixture.app, payload: Fixture.alertPayload)
            #expect(try await client.send(push).status == 200)
            let anonymous = try await APNsProviderClient.connect(.init(host: "127.0.0.1", port: running.port))
            let audience = "http://127.0.0.1:\(running.port)"
            let webPush = try await anonymous.send(
                method: "POST", path: "/push/\(WebPushFixture.deviceID)",
                headers: [
                    PushHeaderField("ttl", "10"), PushHeaderField("content-encoding", "aes128gcm"),
                    PushHeaderField("authorization", try await vapid(audience: audience)),
                ],
                body: try WebPushFixture.encrypted("over h2"))
            #expect(webPush.status == 201, "\(String(decoding: webPush.body, as: UTF8.self))")
            let refused = try await anonymous.send(method: "POST", path: "/push/\(WebPushFixture.openID)", headers: [], body: Data())
            #expect(refused.status == 400 && refused.reason == "MissingTTL")
            #expect(await running.apnsBackend.accepted.count == 1)
            #expect(try await running.backend.accepted.map { try WebPushMessage(payload: $0.payload).text } == ["over h2"])
            await client.close()
            await anonymous.close()
        }
    }

    @Test("HTTP/2 over TLS with ALPN h2 still works when http/1.1 is offered too (NT-3)")
    func http2OverTLS() async throws {
        try await withWebPushServer(tls: true) { running in
            let client = try await APNsProviderClient.connect(
                .init(
                    host: "127.0.0.1", port: running.port,
                    tls: .init(trustRootsPEM: try #require(running.certificates).authorityPEM, serverHostname: "localhost")))
            let response = try await client.send(
                method: "POST", path: "/push/\(WebPushFixture.openID)", headers: [PushHeaderField("ttl", "1")], body: Data())
            #expect(response.status == 201)
            await client.close()
        }
    }
}
