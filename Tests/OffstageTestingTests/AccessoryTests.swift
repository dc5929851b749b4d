import COffstageSystem
import Foundation
import Glibc
import Offstage
import OffstageTesting
import Testing

/// Accessories through the kit (SPEC MODE-4): a real pseudo-terminal stands in for a serial scanner, reached through
/// a link the test makes and removes (plugged in, unplugged), and the session the app hands off is watched for real.
@Suite("OffstageTesting: accessories (KIT-2, MODE-4)")
@MainActor
struct AccessoryTests {
    /// Registers accessory `scanner` at `path` at launch and opens a session whenever it is connected.
    final class ScannerDelegate: ApplicationDelegate, AccessoryManagerDelegate {
        let path: String
        var session: AccessorySession?
        var events: [String] = []

        init(path: String) { self.path = path }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            events.append("launched \(options.reason.rawValue)")
            AccessoryManager.shared.delegate = self
            do {
                let scanner = try AccessoryManager.shared.register(name: "scanner", path: path)
                if scanner.isConnected { open(scanner) }
            } catch {
                events.append("refused: \(error)")
            }
            return true
        }

        func open(_ accessory: Accessory) {
            do {
                session = try AccessorySession(accessory: accessory)
            } catch {
                events.append("cannot open: \(error)")
            }
        }

        func accessoryManager(_ manager: AccessoryManager, didConnect accessory: Accessory) {
            events.append("connected")
            open(accessory)
        }

        func accessoryManager(_ manager: AccessoryManager, didDisconnect accessory: Accessory) {
            events.append("disconnected")
            session?.close()
            session = nil
        }

        func accessoryManager(_ manager: AccessoryManager, didReceiveDataFrom accessory: Accessory) {
            let bytes = (try? session?.read()) ?? []
            events.append("data: \(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines))")
        }
    }

    /// A scanner: a pseudo-terminal whose far end is reachable at a link, as udev's `/dev/serial/by-id/…` links are.
    final class Scanner {
        let link: String
        var master: Int32 = -1

        init(link: String) { self.link = link }

        /// Plugged in: the terminal opens and the link appears.
        func plug() throws {
            var slavePath = [CChar](repeating: 0, count: 64)
            master = offstage_open_pty(&slavePath, slavePath.count)
            guard master >= 0 else { throw POSIXError(.ENODEV) }
            let name = String(decoding: slavePath.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // Raw mode on the far end, as a serial port for a scanner is set: bytes pass as they are.
            var settings = termios()
            let slave = Glibc.open(name, O_RDWR | O_NOCTTY)
            tcgetattr(slave, &settings)
            cfmakeraw(&settings)
            tcsetattr(slave, TCSANOW, &settings)
            Glibc.close(slave)
            guard symlink(name, link) == 0 else { throw POSIXError(.EEXIST) }
        }

        func scan(_ barcode: String) { _ = Glibc.write(master, barcode + "\r\n", barcode.utf8.count + 2) }

        /// Unplugged: the link goes, and the line hangs up.
        func unplug() {
            unlink(link)
            Glibc.close(master)
            master = -1
        }

        deinit {
            unlink(link)
            if master >= 0 { Glibc.close(master) }
        }
    }

    static func link() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("scanner-\(UUID().uuidString)").path }

    @Test("MODE-4: the app opens a session to its plugged-in scanner; suspended, it is woken by a scan and reads it, then suspended again")
    func scanWakesIt() async throws {
        let scanner = Scanner(link: Self.link())
        try scanner.plug()
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.scanner", backgroundModes: ["external-accessory"]) {
            ScannerDelegate(path: scanner.link)
        }
        try await device.open(app)
        try await device.home()
        try await device.advance(by: .seconds(15))
        #expect(app.isSuspended)
        scanner.scan("4006381333931")
        try await device.runUntilIdle()
        let delegate = try #require(app.delegate as? ScannerDelegate)
        #expect(delegate.events == ["launched user", "data: 4006381333931"])
        try await device.advance(by: .seconds(15))
        #expect(app.isSuspended)
    }

    @Test("MODE-4: plugging the scanner in launches the app into the background (reason accessory); unplugging it is heard")
    func plugLaunchesIt() async throws {
        let scanner = Scanner(link: Self.link())
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.scanner", backgroundModes: ["external-accessory"]) {
            ScannerDelegate(path: scanner.link)
        }
        try await device.open(app)
        try await device.forceQuit(app)
        try await device.open(app)  // registered again, not connected
        try await device.home()
        try await device.advance(by: .seconds(15))
        try await device.kill(app)
        try scanner.plug()
        try await device.runUntilIdle()
        #expect(app.launches == [.user, .user, .accessory], "\(app.launches)")
        let delegate = try #require(app.delegate as? ScannerDelegate)
        #expect(delegate.events.first == "launched accessory")
        #expect(delegate.session != nil, "it opened its session")
        scanner.unplug()
        try await device.runUntilIdle()
        #expect(delegate.events.last == "disconnected", "\(delegate.events)")
    }

    @Test("MODE-6: an app that does not declare external-accessory cannot register one; the refusal names the mode")
    func undeclaredModeIsRefused() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.plain") { ScannerDelegate(path: "/dev/ttyACM0") }
        try await device.open(app)
        let events = (app.delegate as? ScannerDelegate)?.events ?? []
        #expect(events.count == 2 && events[1].hasPrefix("refused: ") && events[1].contains("external-accessory"), "\(events)")
    }
}
