import Foundation
import OffstageCore
import OffstageDaemon
import OffstageProtocol
import TestProcesses
import Testing

/// The network's kind from NetworkManager (SPEC SET-1): the real daemon asks the system bus for NetworkManager's
/// `Metered` property and follows its `PropertiesChanged` signals. The bus is a private `dbus-daemon` given to the
/// daemon as `DBUS_SYSTEM_BUS_ADDRESS`, and NetworkManager a stand-in written with an independent D-Bus library
/// (Python's dbus-fast) that owns NetworkManager's name and exports the property as NetworkManager does.
@Suite("The network's kind from NetworkManager (SPEC SET-1)")
struct NetworkManagerIntegrationTests {
    static func device(_ daemon: DaemonHarness) throws -> ControlInterface.DeviceReply {
        try JSONDecoder().decode(ControlInterface.DeviceReply.self, from: Data(try daemon.ok("--json", "device").utf8))
    }

    static func status(_ daemon: DaemonHarness) throws -> ControlInterface.StatusReply {
        try JSONDecoder().decode(ControlInterface.StatusReply.self, from: Data(try daemon.ok("--json", "status").utf8))
    }

    /// Waits until the machine's network, as the daemon reads it, is `kind`.
    static func waitForNetwork(_ daemon: DaemonHarness, _ kind: String?) throws {
        try daemon.waitUntil("the machine's network reads \(kind ?? "nothing")") { try device(daemon).machine.network == kind }
    }

    @Test("SET-1: NetworkManager's Metered decides metered or not where a network is up, follows its changes, and the interfaces decide again when it leaves the bus")
    func meteredFromNetworkManager() throws {
        let bus = try PrivateSessionBus.start()
        defer { bus.stop() }
        try bus.startNetworkManager(metered: 3)  // guess-yes: a phone's hotspot
        // What the interfaces alone say; NetworkManager only says whether a network that is up is metered.
        let interfaces = NetworkReader().read()
        let up = interfaces != NetworkKind.none
        try withDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]) { daemon in
            #expect(try Self.status(daemon).networkSource == "NetworkManager's Metered property (guess-yes)")
            try Self.waitForNetwork(daemon, up ? "metered" : "none")
            try bus.networkManager("metered 2")  // no: the user said this Wi-Fi is not metered
            try daemon.waitUntil("the status follows NetworkManager") {
                try Self.status(daemon).networkSource == "NetworkManager's Metered property (no)"
            }
            try Self.waitForNetwork(daemon, up ? "unmetered" : "none")
            try bus.networkManager("metered 1")
            try Self.waitForNetwork(daemon, up ? "metered" : "none")
            // The CLI's override still wins.
            try daemon.ok("device", "--network", "unmetered")
            #expect(try Self.device(daemon).conditions.network == "unmetered")
            try daemon.ok("device", "--network", "auto")
            try bus.networkManager("quit")
            try daemon.waitUntil("the status says NetworkManager left") {
                try Self.status(daemon).networkSource == "the network interfaces (NetworkManager is not on the system bus)"
            }
            try Self.waitForNetwork(daemon, interfaces.rawValue)
            // It comes back: read again at once.
            try bus.startNetworkManager(metered: 1)
            try Self.waitForNetwork(daemon, up ? "metered" : "none")
        }
    }

    @Test("SET-1: without a system bus, or with NetworkManager turned off, the interfaces decide and the status says why")
    func withoutNetworkManager() throws {
        try withDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/offstage-test-bus"]) { daemon in
            let source = try Self.status(daemon).networkSource
            #expect(source.hasPrefix("the network interfaces (no system bus to ask NetworkManager on: "), "\(source)")
            #expect(try daemon.ok("status").contains("network kind:  from the network interfaces"))
        }
        var settings = DaemonHarness.fastTimings
        settings["networkManager"] = .bool(false)
        try withDaemon(settings: settings) { daemon in
            let source = try Self.status(daemon).networkSource
            #expect(source == "the network interfaces (NetworkManager turned off in the configuration (networkManager))")
        }
    }
}
