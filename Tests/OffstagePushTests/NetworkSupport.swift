import Crypto
import Foundation
import Testing
import X509

#if canImport(Glibc)
import Glibc
#endif

@testable import OffstagePush

/// A throw-away certificate authority and a `localhost` server certificate it signed, made in memory.
struct TestCertificates {
    let authorityPEM: String
    let serverChainPEM: String
    let serverKeyPEM: String

    static func make() throws -> TestCertificates {
        let now = Date()
        let authorityKey = P256.Signing.PrivateKey()
        let authorityName = try DistinguishedName { CommonName("Offstage push test CA") }
        let authority = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(authorityKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 3600, issuer: authorityName, subject: authorityName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(authorityKey)
        )
        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 3600, issuer: authorityName,
            subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost")])
            },
            issuerPrivateKey: .init(authorityKey)
        )
        return TestCertificates(
            authorityPEM: try authority.serializeAsPEM().pemString,
            serverChainPEM: try server.serializeAsPEM().pemString,
            serverKeyPEM: serverKey.pemRepresentation
        )
    }
}

/// A running gateway on a loopback port with its recording backend.
struct RunningGateway {
    let server: PushGatewayServer
    let backend: RecordingBackend
    let gateway: APNsGateway
    let port: Int
    let certificates: TestCertificates?

    /// A client for this gateway, signing with the fixture key unless `credentials` is false.
    func client(credentials: Bool = true, trustAuthority: Bool = true) async throws -> APNsProviderClient {
        let tls = certificates.map {
            APNsProviderClient.Configuration.TLS(trustRootsPEM: trustAuthority ? $0.authorityPEM : nil, serverHostname: "localhost")
        }
        let keys = APNsProviderClient.Configuration.Credentials(
            keyID: Fixture.keyID, teamID: Fixture.team, privateKeyPEM: Fixture.keyPair.privateKeyPEM)
        return try await APNsProviderClient.connect(
            .init(host: "127.0.0.1", port: port, tls: tls, credentials: credentials ? keys : nil))
    }
}

/// Runs `body` against a gateway server on port 0 (TLS when asked), then shuts it down whatever happened.
func withGateway(
    tls: Bool = false, configuration: APNsGatewayConfiguration = .init(),
    _ body: (RunningGateway) async throws -> Void
) async throws {
    let backend = RecordingBackend()
    await backend.add(Fixture.key)
    await backend.register(token: Fixture.token, app: Fixture.app, device: Fixture.device)
    let certificates = tls ? try TestCertificates.make() : nil
    let gateway = APNsGateway(backend: backend, configuration: configuration)
    let server = PushGatewayServer(
        configuration: .init(
            host: "127.0.0.1", port: 0,
            tls: certificates.map { .init(certificateChainPEM: $0.serverChainPEM, privateKeyPEM: $0.serverKeyPEM) }),
        router: PushRouter([APNsRoute(gateway: gateway)])
    )
    try await server.start()
    let running = RunningGateway(
        server: server, backend: backend, gateway: gateway, port: try #require(server.port), certificates: certificates)
    do {
        try await body(running)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

/// Writes `bytes` to a new TCP connection to `port` and reads until the server closes it. Returns whether it did
/// (false if nothing came for 10 s: the read timeout is a safety net, not a wait).
func serverClosesConnection(port: Int, after bytes: [UInt8]) throws -> Bool {
    let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #expect(socketFD >= 0)
    defer { close(socketFD) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    #expect(connected == 0)
    let written = bytes.withUnsafeBytes { write(socketFD, $0.baseAddress, $0.count) }
    #expect(written == bytes.count)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(socketFD, $0.baseAddress, $0.count) }
        if count == 0 { return true }
        if count < 0 { return errno == ECONNRESET }
    }
}
