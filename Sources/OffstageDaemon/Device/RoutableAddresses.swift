import Glibc

/// Which interfaces hold an address that can reach beyond the link, for `NetworkReader`: an interface whose link
/// is up but has no such address yet (Wi-Fi associated while DHCP still runs, a cable in a dead switch port) gives
/// no network.
///
/// Addresses are not in sysfs, so they come from `getifaddrs(3)`; fixture tests, whose interfaces do not exist,
/// say which ones have addresses (`only`) or that addresses do not matter (`notRequired`).
public struct RoutableAddresses: Sendable {
    /// The names of the interfaces with a routable address; nil when that cannot be told (then the link state
    /// alone decides).
    let interfaceNames: @Sendable () -> Set<String>?

    /// From `getifaddrs(3)`: IPv4 other than loopback (127/8) and link-local (169.254/16), IPv6 other than loopback
    /// (::1) and link-local (fe80::/10). Private ranges count: most networks hand them out behind NAT.
    public static let system = RoutableAddresses {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var names: Set<String> = []
        var entry = list
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, let name = current.pointee.ifa_name,
                isRoutable(address)
            else { continue }
            names.insert(String(cString: name))
        }
        return names
    }

    /// The link state alone decides.
    public static let notRequired = RoutableAddresses { nil }

    /// Exactly the interfaces `names` have a routable address (for fixture folders).
    public static func only(_ names: Set<String>) -> RoutableAddresses {
        RoutableAddresses { names }
    }

    /// Answers with `interfaceNames`.
    init(_ interfaceNames: @escaping @Sendable () -> Set<String>?) {
        self.interfaceNames = interfaceNames
    }

    /// Whether an address reaches beyond its link (see `system`).
    private static func isRoutable(_ address: UnsafeMutablePointer<sockaddr>) -> Bool {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            // s_addr is in network byte order: the first octet is the lowest byte in memory.
            let bytes = withUnsafeBytes(of: ipv4) { Array($0) }
            return bytes[0] != 127 && !(bytes[0] == 169 && bytes[1] == 254) && bytes != [0, 0, 0, 0]
        case AF_INET6:
            let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
            }
            let isLoopback = bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
            let isUnspecified = bytes.allSatisfy { $0 == 0 }
            let isLinkLocal = bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80
            return !isLoopback && !isUnspecified && !isLinkLocal
        default:
            return false
        }
    }
}
