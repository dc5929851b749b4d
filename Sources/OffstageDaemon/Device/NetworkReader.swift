import OffstageCore

/// Reads which kind of network the machine is on from the kernel's network class (`/sys/class/net`), for the
/// scheduler's device conditions (SPEC SET-1).
///
/// Each interface is classified (`NetworkInterface.Medium`) and counts when its link is up and, with
/// `RoutableAddresses.system`, it holds an address beyond link-local. The result is the best kind any counting
/// interface gives: unmetered beats metered beats none.
///
/// What is left out, and why:
/// - loopback, and local plumbing that only carries traffic inside the machine or on top of another interface:
///   bridges, tap and tun devices (VPNs, virtual machines' ports), tunnels, WireGuard, VXLAN, and virtual
///   interfaces named as Docker, libvirt, LXC/LXD and Kubernetes plugins name them (`veth*`, `docker*`, `br-*`,
///   `virbr*`, `vnet*`...), plus `dummy*` and `ifb*` test and traffic-shaping devices. Traffic through a VPN or a
///   bridge still leaves by a physical interface, which is classified on its own.
/// - A virtual interface nothing marks as plumbing counts as Ethernet: inside a container the only way out is a
///   veth end renamed `eth0`, and sysfs does not tell a link's kind (veth, dummy) apart; only rtnetlink's
///   `IFLA_INFO_KIND` would.
///
/// Metered: cellular modems (`DEVTYPE=wwan`, PPP and raw-IP links, names `ww*`, `ppp*`, `rmnet*`, `ccmni*`; a PPP
/// link is taken as a modem, though PPPoE DSL uses one too) and USB tethering to a phone (`ipheth`, `rndis_host`).
/// Unmetered: Wi-Fi and Ethernet.
///
/// Not read here: NetworkManager's metered hint (its `Metered` D-Bus property, set by the user or guessed from an
/// Android hotspot's beacon) lives only on D-Bus and has no file form. ``NetworkManagerMetered`` reads it, and
/// ``MachineConditionsReader`` lets it decide, where NetworkManager runs, whether a network that is up is metered.
public struct NetworkReader: Sendable {
    /// The kernel's network class folder.
    public static let systemRoot = "/sys/class/net"

    /// The folder read, with one folder (or link to one) per interface.
    public let root: String
    /// Which interfaces have a routable address.
    public let addresses: RoutableAddresses

    /// A reader of `root`; tests pass a fixture folder laid out like sysfs, with `addresses` saying which of its
    /// interfaces have addresses.
    public init(root: String = NetworkReader.systemRoot, addresses: RoutableAddresses = .system) {
        self.root = root
        self.addresses = addresses
    }

    /// Every interface under the root, classified, in name order.
    public func interfaces() -> [NetworkInterface] {
        let folder = SysfsFolder(root)
        return folder.entries().map { NetworkInterface(folder: folder.child($0), name: $0) }
    }

    /// The interfaces that give the machine a network now: link up, a routable address (when addresses can be
    /// told), and not loopback or plumbing.
    public func connectedInterfaces() -> [NetworkInterface] {
        let addressed = addresses.interfaceNames()
        return interfaces().filter { interface in
            interface.networkKind != nil && interface.linkUp && (addressed?.contains(interface.name) ?? true)
        }
    }

    /// The best kind of network available now.
    public func read() -> NetworkKind {
        Self.best(connectedInterfaces().compactMap(\.networkKind))
    }

    /// The best of `kinds`: unmetered beats metered beats none.
    public static func best(_ kinds: [NetworkKind]) -> NetworkKind {
        if kinds.contains(.unmetered) { return .unmetered }
        if kinds.contains(.metered) { return .metered }
        return .none
    }
}
