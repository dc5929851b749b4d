import COffstageSystem
import Foundation
import OffstageProtocol
import Testing

/// A serial accessory the test plugs in and out: a pseudo-terminal whose far end is reachable through a link at
/// `path`, as udev links a USB serial scanner (`/dev/serial/by-id/…`). Unplugging removes the link and closes the
/// line, which is a hang-up for whoever has it open.
final class PluggedScanner {
    let path: String
    private var master: Int32 = -1

    init(path: String) { self.path = path }

    /// The device appears at `path`.
    func plug() throws {
        var name = [CChar](repeating: 0, count: 128)
        master = offstage_open_pty(&name, name.count)
        guard master >= 0 else { throw HarnessError("cannot open a pseudo-terminal (errno \(errno))") }
        let slave = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: slave)
    }

    /// The scanner reads a barcode: a line ending in CR LF.
    func scan(_ barcode: String) throws {
        let bytes = Array((barcode + "\r\n").utf8)
        guard write(master, bytes, bytes.count) == bytes.count else { throw HarnessError("cannot write to the pty (errno \(errno))") }
    }

    /// The device goes away.
    func unplug() {
        try? FileManager.default.removeItem(atPath: path)
        if master >= 0 { close(master) }
        master = -1
    }

    deinit { unplug() }
}

/// SPEC MODE-4 on the real daemon with the real `Scanner` example and a real serial line (a pty standing in for the
/// USB scanner): connect, data and disconnect wake the suspended app, a connection launches it when it is not running,
/// a force-quit or a missing mode keeps it out, and the CLI shows and simulates it.
@Suite("Accessory apps on the real daemon (SPEC MODE-4)", .serialized)
struct AccessoryModeIntegrationTests {
    static let scanner = "com.example.scanner"
    /// Short timings, keeping their order: 1 s to handle an accessory event.
    static let settings = DaemonHarness.fastTimings.merging(["accessoryEventTime": 1]) { _, new in new }

    static func installScanner(_ daemon: DaemonHarness, at path: String, modes: [String] = ["external-accessory"]) throws {
        try daemon.install(
            "Scanner", id: scanner,
            ["UIBackgroundModes": modes, "OffstageLinux": ["Environment": ["SCANNER_PATH": path]]])
    }

    /// Opens the scanner app, waits until it registered its accessory, and sends it to the background.
    static func openAndLeave(_ daemon: DaemonHarness) throws -> Int32 {
        try daemon.ok("open", scanner)
        try daemon.waitUntil("the scanner registered its accessory") { daemon.output(scanner).contains("registered") }
        let pid = try #require(try daemon.app(scanner).pid)
        try daemon.ok("home")
        try daemon.waitFor(scanner, "suspended", timeout: 5)
        return pid
    }

    static func accessories(_ daemon: DaemonHarness) throws -> [ModesControlInterface.AccessoryLinkMessage] {
        let json = try daemon.ok("accessory", "--json")
        return try JSONDecoder().decode(ModesControlInterface.AccessoryLinksReply.self, from: Data(json.utf8)).accessories
    }

    @Test("MODE-4: plugging in, scanning and unplugging each wake the suspended app, which is suspended again after")
    func connectDataDisconnectWakeTheSuspendedApp() throws {
        try withDaemon(settings: Self.settings) { daemon in
            let device = PluggedScanner(path: daemon.root.path + "/scanner")
            try Self.installScanner(daemon, at: device.path)
            let pid = try Self.openAndLeave(daemon)
            #expect(ProcessProbe.isFrozen(pid))
            #expect(try Self.accessories(daemon).map(\.connected) == [false])

            let plugged = DaemonHarness.now()
            try device.plug()
            try daemon.waitUntil("the app opened its session") { daemon.output(Self.scanner).contains("session open") }
            #expect(try daemon.callbacks(Self.scanner, since: plugged) == ["accessory"])
            try daemon.waitUntil("the daemon watches the handed-off session") {
                try Self.accessories(daemon).first.map { $0.connected == true && $0.session && $0.watched } ?? false
            }
            #expect(ProcessProbe.isFrozen(pid), "suspended again once its second to handle the connection is over")

            let scanned = DaemonHarness.now()
            try device.scan("4006381333931")
            try daemon.waitUntil("the app read the barcode") { daemon.output(Self.scanner).contains("barcode 4006381333931") }
            // Thawed, the app's own readability handler may read the line before the daemon's callback is handled:
            // both happen, in either order.
            try daemon.waitUntil("the app was told the scanner sent data") {
                daemon.output(Self.scanner).contains("woken: the scanner sent data")
            }
            #expect(try daemon.callbacks(Self.scanner, since: scanned).first == "accessory")
            // The app's burst task keeps it running two seconds after the last scan, then it is frozen again.
            try daemon.waitUntil("the burst is over") { daemon.output(Self.scanner).contains("burst over") }
            try daemon.waitFor(Self.scanner, "suspended", timeout: 5)
            #expect(ProcessProbe.isFrozen(pid))

            device.unplug()
            try daemon.waitUntil("the app heard the scanner go") { daemon.output(Self.scanner).contains("scanner disconnected") }
            try daemon.waitUntil("the accessory shows disconnected, without a session") {
                try Self.accessories(daemon).first.map { $0.connected == false && !$0.session } ?? false
            }
            try daemon.waitFor(Self.scanner, "suspended", timeout: 5)
            #expect(try daemon.app(Self.scanner).pid == pid, "the same process throughout")
        }
    }

    @Test("MODE-4, LC-6: plugging in launches a terminated app (launch reason accessory), not a force-quit one")
    func connectionLaunchesTheApp() throws {
        try withDaemon(settings: Self.settings) { daemon in
            let device = PluggedScanner(path: daemon.root.path + "/scanner")
            try Self.installScanner(daemon, at: device.path)
            // Terminated: its process is killed by the pid the daemon started for this test.
            let pid = try Self.openAndLeave(daemon)
            kill(pid, SIGKILL)
            try daemon.waitFor(Self.scanner, "notRunning")
            try device.plug()
            try daemon.waitUntil("the scanner app is launched for the scanner") {
                try daemon.app(Self.scanner).launchReason == "accessory"
            }
            try daemon.waitUntil("the launched app opened its session") { daemon.output(Self.scanner).contains("session open") }
            #expect(daemon.output(Self.scanner).contains("launched (accessory)"))
            try device.scan("9780201633610")
            try daemon.waitUntil("it reads scans") { daemon.output(Self.scanner).contains("barcode 9780201633610") }
            device.unplug()
            try daemon.waitUntil("it heard the scanner go") { daemon.output(Self.scanner).contains("scanner disconnected") }

            // Force-quit: the registration stays, but plugging in launches nothing (LC-6).
            try daemon.ok("force-quit", Self.scanner)
            try daemon.waitFor(Self.scanner, "notRunning")
            try device.plug()
            try daemon.waitUntil("the daemon saw the scanner and did not launch the app") {
                try daemon.log(Self.scanner).contains { $0.message.contains("not launched: the user force-quit it") }
            }
            #expect(try daemon.app(Self.scanner).pid == nil)
            #expect(try Self.accessories(daemon).first?.connected == true)
        }
    }

    @Test("MODE-4: an acknowledged registration outlives a kill -9 of the daemon: plugging in afterwards launches the app")
    func registrationSurvivesRestart() throws {
        try withDaemon(settings: Self.settings) { daemon in
            let device = PluggedScanner(path: daemon.root.path + "/scanner")
            try Self.installScanner(daemon, at: device.path)
            let pid = try Self.openAndLeave(daemon)
            kill(pid, SIGKILL)
            try daemon.waitFor(Self.scanner, "notRunning")
            // No graceful stop that could save it late: the registration was on the disk when the app heard "yes".
            daemon.crash()
            try daemon.start()
            #expect(try Self.accessories(daemon).map(\.name) == ["scanner"])
            try device.plug()
            try daemon.waitUntil("the app is launched for the scanner after the restart") {
                try daemon.app(Self.scanner).launchReason == "accessory"
            }
            device.unplug()
        }
    }

    @Test("MODE-6: without the mode in the manifest the registration is refused, saying which mode to add")
    func undeclaredModeIsRefused() throws {
        try withDaemon(settings: Self.settings) { daemon in
            try Self.installScanner(daemon, at: daemon.root.path + "/scanner", modes: [])
            try daemon.ok("open", Self.scanner)
            try daemon.waitUntil("the scanner app reported the refusal") {
                daemon.output(Self.scanner).contains("cannot register the scanner")
            }
            let output = daemon.output(Self.scanner)
            #expect(output.contains("external-accessory") && output.contains("UIBackgroundModes"), "\(output)")
            #expect(try Self.accessories(daemon).isEmpty)
        }
    }

    @Test("MODE-4, CLI-1: `accessory event` wakes the suspended app; bad input names the thing and changes nothing")
    func accessoryVerbs() throws {
        try withDaemon(settings: Self.settings) { daemon in
            try Self.installScanner(daemon, at: daemon.root.path + "/scanner")
            let pid = try Self.openAndLeave(daemon)
            let text = try daemon.ok("accessory")
            #expect(text.contains("scanner") && text.contains("external-accessory"), "\(text)")

            let forced = DaemonHarness.now()
            let event = try daemon.cli(["accessory", "event", Self.scanner, "scanner", "data"])
            #expect(event.status == 0, "\(event.stderr)")
            try daemon.waitUntil("the app was woken for the forced event") {
                daemon.output(Self.scanner).contains("woken: the scanner sent data")
            }
            #expect(try daemon.callbacks(Self.scanner, since: forced) == ["accessory"])
            #expect(try daemon.log(Self.scanner).contains { $0.message.contains("simulated (forced)") })
            try daemon.waitFor(Self.scanner, "suspended", timeout: 5)
            #expect(ProcessProbe.isFrozen(pid))

            let before = try Self.accessories(daemon)
            let unknownApp = try daemon.cli(["accessory", "event", "com.example.none", "scanner", "data"])
            #expect(unknownApp.status == 3 && unknownApp.stderr.contains("com.example.none"), "\(unknownApp.stderr)")
            let unknownName = try daemon.cli(["accessory", "event", Self.scanner, "printer", "connected"])
            #expect(unknownName.status != 0 && unknownName.stderr.contains("'printer'"), "\(unknownName.stderr)")
            #expect(unknownName.stderr.contains("register it first"), "\(unknownName.stderr)")
            let badEvent = try daemon.cli(["accessory", "event", Self.scanner, "scanner", "plugged"])
            #expect(badEvent.status != 0 && badEvent.stderr.contains("connected, disconnected, data"), "\(badEvent.stderr)")
            let badID = try daemon.cli(["accessory", "event", "not an id", "scanner", "data"])
            #expect(badID.status != 0 && badID.stderr.contains("not an app id"), "\(badID.stderr)")
            #expect(try Self.accessories(daemon) == before, "nothing changed")
            #expect(try daemon.app(Self.scanner).pid == pid && ProcessProbe.isFrozen(pid))
            let help = try daemon.cli(["accessory", "event", "--help"])
            #expect(help.status == 0 && help.stdout.contains("connected, disconnected or data"))
        }
    }

    @Test("MODE-4 bad input on the hand-off socket: a regular file, no name, and a caller that is no app are refused")
    func badSessionHandOff() throws {
        try withDaemon(settings: Self.settings) { daemon in
            let path = ModesInterface.handOffSocketPath(forMain: daemon.socket)
            let filePath = daemon.root.path + "/not-a-device"
            #expect(FileManager.default.createFile(atPath: filePath, contents: Data("x".utf8)))
            let file = open(filePath, O_RDONLY)
            try #require(file >= 0)
            defer { close(file) }
            func handOff(_ fd: Int32, _ parameters: ModesInterface.AccessoryNameParameters?) -> String {
                do {
                    if let parameters {
                        _ = try SocketHandOff.send(
                            fd: fd, to: path, method: ModesInterface.Method.handOffAccessorySession, parameters: parameters,
                            as: ModesInterface.HandOffAccessorySessionReply.self)
                    } else {
                        _ = try SocketHandOff.send(
                            fd: fd, to: path, method: ModesInterface.Method.handOffAccessorySession, parameters: NoParameters(),
                            as: ModesInterface.HandOffAccessorySessionReply.self)
                    }
                    return "accepted"
                } catch {
                    return "\(error)"
                }
            }
            let regular = handOff(file, .init(name: "scanner"))
            #expect(regular.contains("is a regular file, not an accessory's device"), "\(regular)")
            var pair: [Int32] = [0, 0]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
            defer { pair.forEach { close($0) } }
            let unnamed = handOff(pair[0], nil)
            #expect(unnamed.contains("names no accessory"), "\(unnamed)")
            let stranger = handOff(pair[0], .init(name: "scanner"))
            #expect(stranger.contains("NotAnApp") || stranger.contains("belongs to no installed app"), "\(stranger)")
            #expect(try Self.accessories(daemon).isEmpty)
        }
    }
}
