import OffstageCore

/// One network interface as the kernel describes it in `/sys/class/net/NAME`, classified by what it would give
/// the machine: a way out (unmetered or metered), or nothing (loopback, local plumbing).
public struct NetworkInterface: Hashable, Sendable {
    /// What the interface is, as far as sysfs tells.
    public enum Medium: Hashable, Sendable {
        /// The loopback interface (`type` 772).
        case loopback
        /// An interface that only carries traffic inside the machine or on top of another interface, with why it
        /// was recognised as such (a bridge, a container's end of a veth pair, a tun/tap device, a tunnel...).
        case localPlumbing(reason: String)
        /// Ethernet or an Ethernet-like link: a wired port, a USB adapter, or a virtual interface nothing marks as
        /// plumbing (inside a container, the uplink is one end of a veth pair renamed `eth0`).
        case ethernet
        /// Wi-Fi (a `wireless` or `phy80211` entry, or `DEVTYPE=wlan`).
        case wireless
        /// A cellular modem (`DEVTYPE=wwan`, link type PPP or raw IP, or a name `ww*`, `ppp*`, `rmnet*`, `ccmni*`).
        case cellular
        /// USB tethering to a phone (driver `ipheth` of iPhones or `rndis_host` of Android phones): the phone's
        /// cellular data.
        case phoneTethering
    }

    /// The interface name.
    public var name: String
    /// What it is.
    public var medium: Medium
    /// Whether the link carries traffic: `operstate` is `up`, or `unknown` with `carrier` 1 (drivers without
    /// operational state tracking, such as PPP and some modems and virtual devices, report `unknown`).
    public var linkUp: Bool

    /// Creates an interface.
    public init(name: String, medium: Medium, linkUp: Bool) {
        self.name = name
        self.medium = medium
        self.linkUp = linkUp
    }

    /// The kind of network the interface gives when connected; nil for loopback and local plumbing.
    public var networkKind: NetworkKind? {
        switch medium {
        case .ethernet, .wireless: .unmetered
        case .cellular, .phoneTethering: .metered
        case .loopback, .localPlumbing: nil
        }
    }

    /// Reads the interface in `folder`.
    init(folder: SysfsFolder, name: String) {
        let operstate = folder.text("operstate")
        let linkUp = operstate == "up" || (operstate == "unknown" && folder.integer("carrier") == 1)
        self.init(name: name, medium: Self.medium(of: folder, name: name), linkUp: linkUp)
    }

    /// Link type (`type`, the kernel's ARPHRD_* number) of loopback.
    private static let loopbackType = 772
    /// Link type of Ethernet, which Wi-Fi, veth, bridges and taps share.
    private static let ethernetType = 1
    /// Link type of InfiniBand (IP over InfiniBand in data centres).
    private static let infinibandType = 32
    /// Link type of PPP.
    private static let pppType = 512
    /// Link type of raw IP, as modems in raw-IP mode use.
    private static let rawIPType = 519

    /// Name prefixes of cellular data links: systemd's predictable names for WWAN devices (`wwan0`, `wwp0s20f0u6`),
    /// pppd's links, and the data links of Qualcomm (`rmnet_data0`) and MediaTek (`ccmni0`) modems.
    static let cellularPrefixes = ["ww", "ppp", "rmnet", "ccmni"]

    /// Name prefixes of virtual interfaces that only connect containers and virtual machines to the host (or are
    /// test devices), as Docker, libvirt, LXC/LXD, Kubernetes network plugins and the kernel name them by default.
    static let plumbingPrefixes = [
        "veth", "docker", "br-", "virbr", "vnet", "lxcbr", "lxdbr", "cni", "flannel", "cali", "dummy", "ifb",
    ]

    /// Classifies the interface in `folder`, most specific evidence first.
    private static func medium(of folder: SysfsFolder, name: String) -> Medium {
        let type = folder.integer("type")
        if type == loopbackType { return .loopback }
        let properties = folder.ueventProperties()
        let deviceType = properties["DEVTYPE"]
        // Before the link-type check: modems present their data link as PPP, raw IP or even without a link layer.
        if deviceType == "wwan" || type == pppType || type == rawIPType
            || cellularPrefixes.contains(where: name.hasPrefix)
        {
            return .cellular
        }
        guard let type, type == ethernetType || type == infinibandType else {
            // Tunnels, tun devices and WireGuard (no link layer, 65534), IP-in-IP and GRE, CAN buses, monitor-mode
            // Wi-Fi: they carry another interface's traffic, or no IP at all.
            let reason = type.map { "link type \($0) is not Ethernet-like" } ?? "no readable link type"
            return .localPlumbing(reason: reason)
        }
        if deviceType == "wlan" || folder.contains("wireless") || folder.contains("phy80211") { return .wireless }
        let isPhysical = folder.contains("device")
        if isPhysical {
            if let driver = folder.linkTargetName("device/driver"), driver == "ipheth" || driver == "rndis_host" {
                return .phoneTethering
            }
            return .ethernet
        }
        // Virtual from here on (no `device` link: the kernel made it, not a driver for hardware).
        if folder.contains("bridge") || deviceType == "bridge" { return .localPlumbing(reason: "a bridge") }
        if folder.contains("tun_flags") { return .localPlumbing(reason: "a tap device") }
        if let deviceType, ["vxlan", "geneve", "wireguard"].contains(deviceType) {
            return .localPlumbing(reason: "a \(deviceType) overlay")
        }
        if let prefix = plumbingPrefixes.first(where: name.hasPrefix) {
            return .localPlumbing(reason: "a virtual interface named \(prefix)*")
        }
        return .ethernet
    }
}
