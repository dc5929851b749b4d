import Glibc

/// A TCP port on 127.0.0.1 that nothing listens on at this moment: bound to port 0, read, and closed again.
public enum FreePort {
    /// Something went wrong asking the kernel for a port.
    public struct PortError: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// A port that was free a moment ago (another process may take it before the caller binds it).
    public static func loopback() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PortError(description: "socket failed: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw PortError(description: "bind to a free port failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
