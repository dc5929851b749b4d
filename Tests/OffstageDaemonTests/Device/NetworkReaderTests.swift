import Foundation
import OffstageCore
import Testing

@testable import OffstageDaemon

@Suite("Reading network interfaces")
struct NetworkReaderTests {
    /// A reader of the fixture where every interface has an address, so link state and kind alone decide.
    static func reader(_ fixture: SysfsFixture) -> NetworkReader {
        NetworkReader(root: fixture.root, addresses: .notRequired)
    }

    /// Adds the loopback interface, up as it always is (operstate unknown, carrier 1).
    static func addLoopback(_ fixture: SysfsFixture) throws {
        try fixture.interface("lo", type: 772, operstate: "unknown", carrier: 1, physical: false)
    }

    @Test("Wi-Fi up is unmetered")
    func wifiUp() throws {
        try SysfsFixture.with { fixture in
            try Self.addLoopback(fixture)
            try fixture.interface("wlp2s0", operstate: "up", carrier: 1, physical: true, wireless: true)
            try fixture.interface("enp0s31f6", operstate: "down", carrier: 0, physical: true)
            #expect(Self.reader(fixture).read() == NetworkKind.unmetered)
            #expect(Self.reader(fixture).connectedInterfaces().map(\.name) == ["wlp2s0"])
            #expect(Self.reader(fixture).interfaces().first { $0.name == "wlp2s0" }?.medium == .wireless)
        }
    }

    @Test("Ethernet up is unmetered")
    func ethernetUp() throws {
        try SysfsFixture.with { fixture in
            try Self.addLoopback(fixture)
            try fixture.interface("enp0s31f6", operstate: "up", carrier: 1, physical: true)
            try fixture.interface("wlan0", operstate: "down", physical: true, devtype: "wlan")
            #expect(Self.reader(fixture).read() == NetworkKind.unmetered)
            #expect(Self.reader(fixture).interfaces().first { $0.name == "wlan0" }?.medium == .wireless)
        }
    }

    @Test("Only cellular up is metered, whether a modem's wwan link or a PPP link")
    func onlyCellular() throws {
        try SysfsFixture.with { fixture in
            try Self.addLoopback(fixture)
            try fixture.interface("wlan0", operstate: "dormant", carrier: 1, physical: true, wireless: true)
            // A modem on the kernel's WWAN framework: no link layer (type 65534), DEVTYPE=wwan.
            try fixture.interface("wwan0", type: 65534, operstate: "up", carrier: 1, physical: true, devtype: "wwan")
            #expect(Self.reader(fixture).read() == NetworkKind.metered)
            try fixture.interface("wwan0", type: 65534, operstate: "down", carrier: 0, physical: true, devtype: "wwan")
            #expect(Self.reader(fixture).read() == NetworkKind.none)
            // pppd's link: virtual, and without operational state, so operstate unknown with carrier 1.
            try fixture.interface("ppp0", type: 512, operstate: "unknown", carrier: 1, physical: false)
            #expect(Self.reader(fixture).read() == NetworkKind.metered)
        }
    }

    @Test("Unmetered beats metered")
    func unmeteredBeatsMetered() throws {
        try SysfsFixture.with { fixture in
            try fixture.interface("wwp0s20f0u6", type: 519, operstate: "up", carrier: 1, physical: true)
            try fixture.interface("wlan0", operstate: "up", carrier: 1, physical: true, wireless: true)
            #expect(Self.reader(fixture).read() == NetworkKind.unmetered)
            #expect(NetworkReader.best([.metered, .unmetered, .none]) == .unmetered)
            #expect(NetworkReader.best([.none, .metered]) == .metered)
            #expect(NetworkReader.best([]) == NetworkKind.none)
        }
    }

    @Test("Only loopback and local plumbing (veth, bridges, tun, tap) up gives no network")
    func onlyLoopbackAndPlumbing() throws {
        try SysfsFixture.with { fixture in
            try Self.addLoopback(fixture)
            try fixture.interface("veth3f2a1b7", operstate: "up", carrier: 1, physical: false)
            try fixture.interface("docker0", operstate: "up", carrier: 1, physical: false, folders: ["bridge"])
            try fixture.interface("br0", operstate: "up", carrier: 1, physical: false, devtype: "bridge")
            try fixture.interface("virbr0", operstate: "up", carrier: 1, physical: false)
            try fixture.interface("tap0", operstate: "up", carrier: 1, physical: false, folders: ["tun_flags"])
            try fixture.interface("tun0", type: 65534, operstate: "unknown", carrier: 1, physical: false)
            try fixture.interface(
                "wg0", type: 65534, operstate: "unknown", carrier: 1, physical: false, devtype: "wireguard")
            try fixture.interface("vxlan.calico", operstate: "up", carrier: 1, physical: false, devtype: "vxlan")
            let reader = Self.reader(fixture)
            #expect(reader.read() == NetworkKind.none)
            #expect(reader.connectedInterfaces().isEmpty)
            let media = Dictionary(uniqueKeysWithValues: reader.interfaces().map { ($0.name, $0.medium) })
            #expect(media["lo"] == .loopback)
            #expect(media["veth3f2a1b7"] == .localPlumbing(reason: "a virtual interface named veth*"))
            #expect(media["docker0"] == .localPlumbing(reason: "a bridge"))
            #expect(media["br0"] == .localPlumbing(reason: "a bridge"))
            #expect(media["tap0"] == .localPlumbing(reason: "a tap device"))
            #expect(media["tun0"] == .localPlumbing(reason: "link type 65534 is not Ethernet-like"))
            #expect(media["vxlan.calico"] == .localPlumbing(reason: "a vxlan overlay"))
        }
    }

    @Test("operstate unknown counts only with carrier 1; a dummy device is plumbing however it reports")
    func operstateUnknown() throws {
        try SysfsFixture.with { fixture in
            // The dummy driver keeps no operational state: operstate unknown, carrier 1, and no hardware behind it.
            try fixture.interface("dummy0", operstate: "unknown", carrier: 1, physical: false)
            #expect(Self.reader(fixture).interfaces().map(\.linkUp) == [true])
            #expect(Self.reader(fixture).read() == NetworkKind.none)
            // A network card whose driver does not track operstate either: counts while it has carrier.
            try fixture.interface("eth1", operstate: "unknown", carrier: 0, physical: true)
            #expect(Self.reader(fixture).read() == NetworkKind.none)
            try fixture.interface("eth1", operstate: "unknown", carrier: 1, physical: true)
            #expect(Self.reader(fixture).read() == NetworkKind.unmetered)
            // Administratively down: the kernel refuses to read carrier at all (EINVAL); no file here.
            try fixture.delete("eth1")
            try fixture.interface("eth1", operstate: "unknown", carrier: nil, physical: true)
            #expect(Self.reader(fixture).read() == NetworkKind.none)
        }
    }

    @Test("Inside a container, the uplink is a veth end renamed eth0: it counts as Ethernet")
    func containerUplink() throws {
        try SysfsFixture.with { fixture in
            try Self.addLoopback(fixture)
            try fixture.interface("eth0", operstate: "up", carrier: 1, physical: false)
            #expect(Self.reader(fixture).read() == NetworkKind.unmetered)
        }
    }

    @Test("USB tethering to a phone (rndis_host, ipheth) is metered; a USB Ethernet adapter is not")
    func usbTethering() throws {
        try SysfsFixture.with { fixture in
            try fixture.interface("usb0", operstate: "up", carrier: 1, physical: true, driver: "rndis_host")
            #expect(Self.reader(fixture).read() == NetworkKind.metered)
            try fixture.delete("usb0")
            try fixture.interface("eth2", operstate: "up", carrier: 1, physical: true, driver: "ipheth")
            #expect(Self.reader(fixture).read() == NetworkKind.metered)
            try fixture.delete("eth2")
            try fixture.interface("enx00e04c680001", operstate: "up", carrier: 1, physical: true, driver: "r8152")
            #expect(Self.reader(fixture).read() == NetworkKind.unmetered)
        }
    }

    @Test("A link up without a routable address gives no network yet")
    func addressRequired() throws {
        try SysfsFixture.with { fixture in
            try fixture.interface("wlan0", operstate: "up", carrier: 1, physical: true, wireless: true)
            try fixture.interface("wwan0", operstate: "up", carrier: 1, physical: true, devtype: "wwan")
            #expect(NetworkReader(root: fixture.root, addresses: .only([])).read() == NetworkKind.none)
            #expect(NetworkReader(root: fixture.root, addresses: .only(["wwan0"])).read() == NetworkKind.metered)
            #expect(NetworkReader(root: fixture.root, addresses: .only(["wwan0", "wlan0"])).read() == .unmetered)
        }
    }

    @Test("Links that carry no IP of their own (a CAN bus, an unreadable type) are left out")
    func otherLinkTypes() throws {
        try SysfsFixture.with { fixture in
            try fixture.interface("can0", type: 280, operstate: "up", carrier: 1, physical: true)
            try fixture.add("broken0", attributes: ["operstate": "up"], folders: ["device"])
            #expect(Self.reader(fixture).read() == NetworkKind.none)
            #expect(
                Self.reader(fixture).interfaces().map(\.medium) == [
                    .localPlumbing(reason: "no readable link type"),
                    .localPlumbing(reason: "link type 280 is not Ethernet-like"),
                ])
        }
    }

    @Test("This machine: loopback is loopback, never has a routable address, and the reading agrees")
    func thisMachine() {
        let reader = NetworkReader()
        let interfaces = reader.interfaces()
        #expect(interfaces.first { $0.name == "lo" }?.medium == .loopback)
        let addressed = RoutableAddresses.system.interfaceNames()
        #expect(addressed != nil)
        #expect(addressed?.contains("lo") == false)
        #expect(reader.read() == NetworkReader.best(reader.connectedInterfaces().compactMap(\.networkKind)))
        #expect(NetworkReader(root: "/nonexistent-offstage-net").read() == NetworkKind.none)
    }
}
