import Foundation
import Glibc
import Offstage
import OffstageTesting
import Testing

/// VoIP through the kit (SPEC MODE-2): the app's real signalling socket handed off and watched for real, its
/// keep-alive handler on virtual time; and what is refused.
@Suite("OffstageTesting: VoIP sockets and keep-alive (KIT-2, MODE-2)")
@MainActor
struct VoIPTests {
    /// Hands off `fd` (its end of the test's connection) at launch and sets a keep-alive handler; its socket handler
    /// reads what came, as a VoIP app reads its server's invitation.
    final class VoIPDelegate: ApplicationDelegate {
        let fd: Int32
        var events: [String] = []
        var handOffError: VoIPError?

        init(fd: Int32) { self.fd = fd }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            do {
                try application.setVoIPSocket(fd) { [self] event in
                    switch event {
                    case .readable:
                        var buffer = [UInt8](repeating: 0, count: 256)
                        let count = read(fd, &buffer, buffer.count)
                        events.append("readable: \(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self))")
                    case .closed:
                        events.append("closed")
                    }
                }
            } catch {
                handOffError = error
            }
            application.setKeepAliveTimeout(600) { [self] in events.append("keep-alive") }
            return true
        }
    }

    /// A connected pair of stream sockets: the app's end and the server's (the test's).
    static func connection() throws -> (app: Int32, server: Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EMFILE) }
        return (fds[0], fds[1])
    }

    /// The app installed with `voip`, opened and left: suspended.
    static func suspendedApp(fd: Int32) async throws -> (TestDevice, TestApp) {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.voip", backgroundModes: ["voip"]) { VoIPDelegate(fd: fd) }
        try await device.open(app)
        #expect((app.delegate as? VoIPDelegate)?.handOffError == nil)
        try await device.home()
        try await device.advance(by: .seconds(15))
        #expect(app.isSuspended)
        return (device, app)
    }

    @Test("MODE-2: suspended, the app is woken when its server sends on the handed-off socket; its handler reads what came, then it is suspended again")
    func serverDataWakesIt() async throws {
        let (app, server) = try Self.connection()
        defer { close(app); close(server) }
        let (device, testApp) = try await Self.suspendedApp(fd: app)
        #expect(write(server, "INVITE sip:alice", 16) == 16)
        try await device.runUntilIdle()
        let delegate = try #require(testApp.delegate as? VoIPDelegate)
        #expect(delegate.events == ["readable: INVITE sip:alice"])
        #expect(testApp.state == .background)
        try await device.advance(by: .seconds(15))
        #expect(testApp.isSuspended, "suspended again once its time to handle the data is over")
        // Nothing more came: nothing more wakes it.
        try await device.advance(by: .seconds(60))
        #expect(delegate.events == ["readable: INVITE sip:alice"])
    }

    @Test("MODE-2: the server hangs up: the app hears the connection closed, once")
    func hangUpIsHeard() async throws {
        let (app, server) = try Self.connection()
        defer { close(app) }
        let (device, testApp) = try await Self.suspendedApp(fd: app)
        close(server)
        try await device.advance(by: .seconds(30))
        #expect((testApp.delegate as? VoIPDelegate)?.events == ["closed"])
    }

    @Test("MODE-2: the keep-alive handler runs while the app is suspended, at least every ten minutes")
    func keepAliveRuns() async throws {
        let (app, server) = try Self.connection()
        defer { close(app); close(server) }
        let (device, testApp) = try await Self.suspendedApp(fd: app)
        try await device.advance(by: .seconds(3600))
        let count = (testApp.delegate as? VoIPDelegate)?.events.filter { $0 == "keep-alive" }.count ?? 0
        #expect(count >= 6, "\(count) in an hour")
    }

    @Test("KIT-6: a descriptor that is no socket is refused to the app, naming what it is; nothing is watched")
    func notASocketIsRefused() async throws {
        let file = open("/dev/null", O_RDONLY)
        defer { close(file) }
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.voip", backgroundModes: ["voip"]) { VoIPDelegate(fd: file) }
        try await device.open(app)
        let error = try #require((app.delegate as? VoIPDelegate)?.handOffError)
        #expect(error.code == .invalidArgument && error.message.contains("a character device"), "\(error)")
    }

    @Test("MODE-6: an app that does not declare the voip mode cannot hand off a socket")
    func undeclaredModeIsRefused() async throws {
        let (socket, server) = try Self.connection()
        defer { close(socket); close(server) }
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.plain") { VoIPDelegate(fd: socket) }
        try await device.open(app)
        let error = try #require((app.delegate as? VoIPDelegate)?.handOffError)
        #expect(error.code == .notPermitted && error.message.contains("voip"), "\(error)")
    }
}
