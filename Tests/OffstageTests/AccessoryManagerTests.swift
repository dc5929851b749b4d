import Foundation
import Glibc
import OffstageProtocol
import Synchronization
import Testing

@testable import Offstage

/// SPEC MODE-4, the app's side: registrations, hand-offs and re-hand-offs against a stand-in daemon, and how an
/// `accessory` callback reaches the delegate.
@Suite("AccessoryManager (MODE-4)", .serialized)
@MainActor
struct AccessoryManagerTests {
    /// Records what the delegate and the handlers heard.
    final class Recorder: AccessoryManagerDelegate {
        var heard: [String] = []
        var accessories: [Accessory] = []
        var bytes: [UInt8] = []

        func accessoryManager(_ manager: AccessoryManager, didConnect accessory: Accessory) {
            note("connected", accessory)
        }
        func accessoryManager(_ manager: AccessoryManager, didDisconnect accessory: Accessory) {
            note("disconnected", accessory)
        }
        func accessoryManager(_ manager: AccessoryManager, didReceiveDataFrom accessory: Accessory) {
            note("data", accessory)
        }

        func note(_ what: String, _ accessory: Accessory) {
            heard.append("\(accessory.name) \(what)")
            accessories.append(accessory)
        }
    }

    /// A stand-in daemon that knows the accessory `scanner` (connected) and answers other calls with no parameters.
    /// `refusing`: the hand-offs (counted from 0) it refuses as a daemon that does not know the accessory.
    static func daemon(refusing: Set<Int> = []) throws -> FakeModesDaemon {
        let handOffs = Mutex(0)
        let scanner = Self.accessory("scanner", "/dev/ttyACM0", connected: true)
        return try FakeModesDaemon { method, parameters in
            switch method {
            case ModesInterface.Method.registerAccessory where parameters["mode"] as? String == "bluetooth-central":
                return Self.refusal("NotPermitted", "no bluetooth-central", fix: "add it")
            case ModesInterface.Method.registerAccessory: return #"{"parameters":{"accessory":\#(scanner)}}"#
            case ModesInterface.Method.accessories:
                let printer = Self.accessory("printer", "/dev/usb/lp0", connected: false)
                return #"{"parameters":{"accessories":[\#(printer),\#(scanner)]}}"#
            case ModesInterface.Method.handOffAccessorySession:
                let number = handOffs.withLock { count in
                    defer { count += 1 }
                    return count
                }
                if refusing.contains(number) {
                    return Self.refusal("InvalidArgument", "no accessory 'scanner'", fix: "register it")
                }
                return #"{"parameters":{"kind":"character-device"}}"#
            default: return #"{"parameters":{}}"#
            }
        }
    }

    /// An accessory as the daemon describes it.
    nonisolated static func accessory(_ name: String, _ path: String, connected: Bool) -> String {
        #"{"name":"\#(name)","path":"\#(path)","mode":"external-accessory","connected":\#(connected),"session":false}"#
    }

    /// An `io.offstage.Modes` error reply.
    nonisolated static func refusal(_ error: String, _ message: String, fix: String) -> String {
        #"{"error":"io.offstage.Modes.\#(error)","parameters":{"message":"\#(message)","fix":"\#(fix)"}}"#
    }

    static func manager(_ daemon: FakeModesDaemon) -> AccessoryManager {
        AccessoryManager(link: DaemonLink(environment: ["OFFSTAGE_SOCKET": daemon.path]), registry: AccessoryRegistry())
    }

    @Test("Registering sends the name, path and mode and returns the accessory with whether it is connected")
    func register() throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let manager = Self.manager(daemon)
        let scanner = try manager.register(name: "scanner", path: "/dev/ttyACM0")
        #expect(
            scanner == Accessory(name: "scanner", path: "/dev/ttyACM0", mode: .externalAccessory, isConnected: true))
        #expect(
            daemon.calls("RegisterAccessory").map(\.parameters) == [
                #"{"mode":"external-accessory","name":"scanner","path":"\/dev\/ttyACM0"}"#
            ])
        #expect(try manager.registeredAccessories.map(\.name) == ["printer", "scanner"])
        #expect(try manager.connectedAccessories.map(\.name) == ["scanner"])
        try manager.unregister(name: "scanner")
        #expect(daemon.calls("UnregisterAccessory").map(\.parameters) == [#"{"name":"scanner"}"#])
    }

    @Test("A refusal keeps the daemon's code, message and fix; without a daemon the error says so")
    func refusals() throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        #expect(throws: AccessoryError(.notPermitted, "no bluetooth-central", fix: "add it")) {
            try Self.manager(daemon).register(name: "strap", path: "/dev/rfcomm0", mode: .bluetoothCentral)
        }
        let nowhere = AccessoryManager(
            link: DaemonLink(environment: ["OFFSTAGE_SOCKET": daemon.path + ".none"]), registry: AccessoryRegistry())
        do {
            try nowhere.register(name: "scanner", path: "/dev/ttyACM0")
            Issue.record("registering without a daemon must fail")
        } catch {
            #expect(error.code == .unavailable && error.fix.contains("offstaged"))
        }
    }

    @Test("A session is handed off on the hand-off socket with its descriptor; it is handed off again after a restart")
    func handOff() throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let manager = Self.manager(daemon)
        let line = try TestLine()
        let session = try AccessorySession(path: line.slave)
        try session.handOff(accessoryNamed: "scanner", link: manager.link, registry: manager.registry)
        #expect(session.accessoryName == "scanner" && manager.registry.hasSession("scanner"))
        let call = try #require(daemon.calls("HandOffAccessorySession").first)
        #expect(call.parameters == #"{"name":"scanner"}"#)
        var handed = stat()
        var device = stat()
        try #require(call.fd >= 0 && fstat(call.fd, &handed) == 0 && stat(line.slave, &device) == 0)
        #expect(handed.st_rdev == device.st_rdev, "the daemon got the accessory's own channel")
        line.send("ok\n")
        #expect(try sessionRead(session, 3) == Array("ok\n".utf8), "the app keeps reading its session")

        manager.registry.reattached(link: manager.link)
        #expect(daemon.calls("HandOffAccessorySession").count == 2, "a restarted daemon gets the session back")
        session.close()
        #expect(!manager.registry.hasSession("scanner"))
        manager.registry.reattached(link: manager.link)
        #expect(daemon.calls("HandOffAccessorySession").count == 2, "a closed session is not handed off again")
    }

    @Test("A daemon that lost the registration gets it again before the session")
    func reRegister() throws {
        let daemon = try Self.daemon(refusing: [0, 2])
        defer { daemon.close() }
        let manager = Self.manager(daemon)
        try manager.register(name: "scanner", path: "/dev/ttyACM0")
        let line = try TestLine()
        let session = try AccessorySession(path: line.slave)
        defer { session.close() }
        #expect(throws: AccessoryError.self) {
            try session.handOff(accessoryNamed: "scanner", link: manager.link, registry: manager.registry)
        }
        #expect(!manager.registry.hasSession("scanner"), "a refused hand-off keeps nothing")
        try session.handOff(accessoryNamed: "scanner", link: manager.link, registry: manager.registry)
        let before = daemon.calls.count
        manager.registry.reattached(link: manager.link)
        let after = daemon.calls.dropFirst(before)
        #expect(
            after.map { $0.method } == [
                ModesInterface.Method.handOffAccessorySession, ModesInterface.Method.registerAccessory,
                ModesInterface.Method.handOffAccessorySession,
            ])
        #expect(
            after.dropFirst().first?.parameters
                == #"{"mode":"external-accessory","name":"scanner","path":"\/dev\/ttyACM0"}"#)
        #expect(manager.registry.hasSession("scanner"))
    }

    @Test("An accessory callback, as it comes on the wire, reaches the delegate and the handler as the right event")
    func callbacks() throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let manager = Self.manager(daemon)
        let recorder = Recorder()
        manager.delegate = recorder
        var handled: [Accessory.Event] = []
        manager.setEventHandler(forAccessoryNamed: "scanner") { event, _ in handled.append(event) }
        func deliver(_ json: String) throws {
            manager.handle(try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: Data(json.utf8)))
        }
        try deliver(#"{"id":1,"kind":"accessory","accessory":"scanner","accessoryEvent":"connected"}"#)
        try deliver(#"{"id":2,"kind":"accessory","accessory":"scanner","accessoryEvent":"data"}"#)
        try deliver(#"{"id":3,"kind":"accessory","accessory":"scanner","accessoryEvent":"disconnected"}"#)
        try deliver(#"{"id":4,"kind":"accessory","accessory":"scanner","accessoryEvent":"exploded"}"#)
        #expect(recorder.heard == ["scanner connected", "scanner data", "scanner disconnected"])
        #expect(handled == [.connected, .data, .disconnected])
        #expect(recorder.accessories.map(\.isConnected) == [true, true, false])
        #expect(
            recorder.accessories.first?.path == "/dev/ttyACM0",
            "an accessory not registered by this process is looked up")
    }

    @Test("Events that come before there is a delegate are given to the first one set")
    func keptForDelegate() async throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let manager = Self.manager(daemon)
        try manager.register(name: "scanner", path: "/dev/ttyACM0")
        manager.handle(
            AppInterface.CallbackMessage(id: 1, kind: "accessory", accessory: "scanner", accessoryEvent: "connected"))
        let recorder = Recorder()
        manager.delegate = recorder
        #expect(recorder.heard.isEmpty, "given after the call that set the delegate returns")
        for _ in 0..<100 where recorder.heard.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        #expect(recorder.heard == ["scanner connected"])
    }

    @Test("A disconnection drops the session kept for hand-off: the daemon closed its copy")
    func disconnectionDropsSession() throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let manager = Self.manager(daemon)
        let line = try TestLine()
        let session = try AccessorySession(path: line.slave)
        defer { session.close() }
        try session.handOff(accessoryNamed: "scanner", link: manager.link, registry: manager.registry)
        manager.handle(
            AppInterface.CallbackMessage(id: 1, kind: "accessory", accessory: "scanner", accessoryEvent: "disconnected")
        )
        #expect(!manager.registry.hasSession("scanner"))
    }

    @Test("The readability handler runs on the main actor when the accessory sends, and once at its hang-up")
    func readabilityHandler() async throws {
        let line = try TestLine()
        let session = try AccessorySession(path: line.slave)
        defer { session.close() }
        let heard = Recorder()
        session.readabilityHandler = { session in
            do throws(AccessoryError) {
                heard.bytes += try session.read()
            } catch {
                heard.heard.append("\(error.code)")
            }
        }
        line.send("123\n")
        for _ in 0..<150 where heard.bytes.count < 4 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(heard.bytes == Array("123\n".utf8))
        line.hangUp()
        for _ in 0..<150 where heard.heard.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        #expect(heard.heard == ["disconnected"])
        #expect(session.readabilityHandler == nil, "a hang-up stops the handler, which would be called forever")
    }
}
