import Glibc

/// Whether a descriptor an app handed off as an accessory session (SPEC MODE-4) is something a shell can watch for
/// it: a character device (a serial port, a pty standing in for one, an RFCOMM port), a FIFO, or a connected socket.
/// A regular file or a directory is always readable, so watching one would wake the app for nothing. Only `fstat`
/// (and, for a socket, ``HandedOffSocketCheck``) is asked; nothing is read.
public enum AccessorySessionCheck {
    /// What to hand off instead, for the error.
    public static let fix = "hand off the descriptor of the accessory's open device node, FIFO or connected socket"

    /// `character-device`, `fifo` or `socket`.
    public static func check(_ fd: Int32) throws(AccessorySessionError) -> String {
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw AccessorySessionError(fd: fd, what: "cannot be inspected (fstat failed, errno \(errno))")
        }
        switch status.st_mode & S_IFMT {
        case S_IFCHR: return "character-device"
        case S_IFIFO: return "fifo"
        case S_IFSOCK:
            do {
                _ = try HandedOffSocketCheck.check(fd)
                return "socket"
            } catch {
                throw AccessorySessionError(fd: fd, what: "a socket the daemon cannot watch (\(error.code))")
            }
        case let type:
            throw AccessorySessionError(fd: fd, what: HandedOffSocketCheck.describe(fileType: type))
        }
    }
}

/// A handed-off accessory session that cannot be watched: what the descriptor is instead.
public struct AccessorySessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The descriptor, in the daemon.
    public var fd: Int32
    /// What it is ("a regular file").
    public var what: String

    public var description: String { "fd \(fd) is \(what), not an accessory's device, FIFO or connected socket" }
}
