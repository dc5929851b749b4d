import Glibc

/// Opening an accessory's channel (SPEC MODE-4): a character device or FIFO is opened for reading and writing without
/// blocking and never as a controlling terminal, a terminal is put in raw mode, and a Unix socket is connected.
enum AccessoryChannel {
    /// An open channel.
    struct Opened {
        var fd: Int32
        var kind: AccessorySession.Kind
        var isTerminal: Bool
    }

    /// The baud rates a session may set, and their `speed_t` constants.
    static let speeds: [Int: speed_t] = [
        1_200: speed_t(B1200), 2_400: speed_t(B2400), 4_800: speed_t(B4800), 9_600: speed_t(B9600),
        19_200: speed_t(B19200), 38_400: speed_t(B38400), 57_600: speed_t(B57600), 115_200: speed_t(B115200),
        230_400: speed_t(B230400), 460_800: speed_t(B460800), 921_600: speed_t(B921600),
    ]

    /// Opens the channel at `path` (following links, as udev's `/dev/serial/by-id/…` are).
    static func open(_ path: String, baudRate: Int?) throws(AccessoryError) -> Opened {
        if let baudRate, speeds[baudRate] == nil {
            let rates = speeds.keys.sorted().map(String.init).joined(separator: ", ")
            throw AccessoryError(
                .invalidArgument, "\(baudRate) is not a baud rate a session can set",
                fix: "use one of \(rates), or nil to keep the device's")
        }
        var status = stat()
        guard stat(path, &status) == 0 else { throw .system("stat", path: path, errno: errno) }
        switch status.st_mode & S_IFMT {
        case S_IFSOCK:
            return Opened(fd: try connect(path), kind: .socket, isTerminal: false)
        case S_IFCHR, S_IFIFO:
            // Non-blocking, so that reading returns what is there and the main actor never waits on the device;
            // O_NOCTTY, so that a serial port never becomes the app's controlling terminal (whose hang-up would
            // signal the app).
            let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { throw .system("open", path: path, errno: errno) }
            let terminal = isatty(fd) == 1
            if terminal {
                do {
                    try makeRaw(fd, path: path, baudRate: baudRate)
                } catch {
                    Glibc.close(fd)
                    throw error
                }
            }
            let kind: AccessorySession.Kind = (status.st_mode & S_IFMT) == S_IFIFO ? .fifo : .characterDevice
            return Opened(fd: fd, kind: kind, isTerminal: terminal)
        default:
            throw AccessoryError(
                .invalidArgument,
                "\(path) is not a character device, a FIFO or a socket, so it is no accessory's channel",
                fix: "give the device's path (/dev/ttyACM0, /dev/rfcomm0, a /dev/serial/by-id/… link) or a Unix socket")
        }
    }

    /// Raw mode: bytes pass as the device sends them (no line editing, echo, signals, or CR/LF translation), and a
    /// read with nothing there fails with EAGAIN (VMIN 1) instead of returning 0, which would look like a hang-up.
    /// CLOCAL: the modem-control lines, which scanners and adapters rarely drive, do not gate the line.
    static func makeRaw(_ fd: Int32, path: String, baudRate: Int?) throws(AccessoryError) {
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else { throw .system("tcgetattr", path: path, errno: errno) }
        cfmakeraw(&settings)
        settings.c_cflag |= tcflag_t(CLOCAL | CREAD)
        withUnsafeMutableBytes(of: &settings.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        if let baudRate, let speed = speeds[baudRate] {
            guard cfsetspeed(&settings, speed) == 0 else { throw .system("cfsetspeed", path: path, errno: errno) }
        }
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else { throw .system("tcsetattr", path: path, errno: errno) }
    }

    /// A stream socket connected to the Unix socket at `path`, then made non-blocking (a connect to a Unix socket
    /// completes at once or fails, so it is made blocking for that one call).
    static func connect(_ path: String) throws(AccessoryError) -> Int32 {
        var address = sockaddr_un()
        let bytes = Array(path.utf8)
        let room = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < room else {
            throw AccessoryError(
                .invalidArgument, "the socket path \(path) is longer than the \(room - 1) bytes a Unix socket allows",
                fix: "give the accessory's socket a shorter path")
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", path: path, errno: errno) }
        var result: Int32
        repeat {
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        } while result != 0 && errno == EINTR
        guard result == 0, fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .system("connect", path: path, errno: code)
        }
        return fd
    }
}
