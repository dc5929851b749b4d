/// Who is on the other end of a Unix socket connection, as the kernel reports it (`SO_PEERCRED`): the process that
/// connected and its user and group at the time it connected.
///
/// This is the only trustworthy identity of a caller. Nothing a message says about who sent it is.
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The peer's process id.
    public var pid: Int32
    /// The peer's effective user id.
    public var uid: UInt32
    /// The peer's effective group id.
    public var gid: UInt32

    /// Credentials with the given ids.
    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    init(_ credentials: UcredLayout) {
        self.init(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    /// `pid 1234 (uid 1000, gid 1000)`.
    public var description: String {
        "pid \(pid) (uid \(uid), gid \(gid))"
    }
}

/// The kernel's `struct ucred` { pid_t pid; uid_t uid; gid_t gid; }, which Glibc only declares under `_GNU_SOURCE`
/// and so is not visible to Swift. Three 32-bit fields in declaration order: Swift lays a struct out the same way C
/// does here, which `VarlinkServer` checks (12 bytes) before reading `SO_PEERCRED` into it.
struct UcredLayout: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
