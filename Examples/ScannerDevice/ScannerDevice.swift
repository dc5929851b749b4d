import COffstageSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Prints one line at once (stdout is a pipe or a file for a test or the demo, where it would be block-buffered).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data(("ScannerDevice: " + line + "\n").utf8))
}

/// A barcode scanner on a serial line, for the `Scanner` example: a pseudo-terminal whose far end (the slave) is
/// reachable at a path given on the command line through a symbolic link, as udev's `/dev/serial/by-id/…` links
/// reach real serial ports. The link appearing is the scanner being plugged in; it then sends each barcode as a line
/// ending in CR LF, as scanners in serial mode do.
///
/// Usage: `ScannerDevice PATH [--interval SECONDS] [--stay] [BARCODE …]`
/// - `PATH`: where the link is made (a stale link left there is replaced; anything else there is refused).
/// - `BARCODE …`: the barcodes to send, one every `--interval` seconds (default 1), the first after one interval;
///   with none, one per line read from standard input, paced the same way, until it ends.
/// - `--stay`: after the last barcode, stay connected until SIGTERM or SIGINT instead of exiting. Without it the
///   scanner stays plugged in one more interval, then exits: a hang-up discards what the far end has not read yet
///   (as pulling a real scanner's cable does), so unplugging at once could lose the last barcode.
///
/// On exit, SIGTERM, SIGINT or SIGHUP it removes the link and closes its end of the line, which is a hang-up for
/// whoever has the port open: the scanner was unplugged.
@main
struct ScannerDevice {
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var interval = 1.0
        var stays = false
        if let index = arguments.firstIndex(of: "--interval"), arguments.indices.contains(index + 1),
            let seconds = Double(arguments[index + 1]), seconds >= 0
        {
            interval = seconds
            arguments.removeSubrange(index...index + 1)
        }
        if let index = arguments.firstIndex(of: "--stay") {
            stays = true
            arguments.remove(at: index)
        }
        guard let path = arguments.first, !path.hasPrefix("-") else {
            say("usage: ScannerDevice PATH [--interval SECONDS] [--stay] [BARCODE ...]")
            exit(64)
        }
        let barcodes = Array(arguments.dropFirst())

        // Blocked before any thread starts, so that every thread inherits the mask and only sigwait takes them.
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let line: Line
        do {
            line = try Line(linkedAt: path)
        } catch {
            say("\(error)")
            exit(1)
        }
        say("scanner connected: \(line.slave) linked at \(path)")
        let awaited = signals
        let waiter = Thread {
            var set = awaited
            var received: Int32 = 0
            sigwait(&set, &received)
            say("got signal \(received): unplugging")
            line.unplug()
            exit(0)
        }
        waiter.start()
        Thread.detachNewThread { line.drainAppWrites() }

        let send = { (barcode: String) in
            Thread.sleep(forTimeInterval: interval)
            line.send(barcode)
        }
        if barcodes.isEmpty {
            while let text = readLine() { send(text.trimmingCharacters(in: .whitespaces)) }
        } else {
            barcodes.forEach(send)
        }
        if stays {
            say("staying connected until SIGTERM or SIGINT")
            while true { pause() }
        }
        Thread.sleep(forTimeInterval: interval)
        line.unplug()
    }
}

struct DeviceError: Error, CustomStringConvertible {
    let description: String
}

/// The pseudo-terminal standing in for the scanner's serial line, and the link to it.
final class Line: Sendable {
    let master: Int32
    let slave: String
    let link: String
    /// A descriptor of the slave held here: it sets raw mode (so nothing the scanner sends is echoed back or
    /// translated before the app has opened the port), and keeps the line up while no app has it open.
    let held: Int32
    private let unplugged = Mutex(false)

    init(linkedAt path: String) throws {
        var name = [CChar](repeating: 0, count: 128)
        master = offstage_open_pty(&name, name.count)
        guard master >= 0 else {
            throw DeviceError(description: "cannot open a pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        slave = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        held = open(slave, O_RDWR | O_NOCTTY | O_CLOEXEC)
        var settings = termios()
        guard held >= 0, tcgetattr(held, &settings) == 0 else {
            throw DeviceError(description: "cannot open \(slave): \(String(cString: strerror(errno)))")
        }
        cfmakeraw(&settings)
        tcsetattr(held, TCSANOW, &settings)
        link = path
        var existing = stat()
        if lstat(path, &existing) == 0 {
            guard existing.st_mode & S_IFMT == S_IFLNK else {
                throw DeviceError(description: "\(path) exists and is not a link; give another path")
            }
            unlink(path)
            say("replaced a stale link at \(path)")
        }
        guard symlink(slave, path) == 0 else {
            throw DeviceError(description: "cannot make the link \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Sends one barcode as the scanner does: the digits, then CR LF.
    func send(_ barcode: String) {
        guard !barcode.isEmpty else { return }
        let bytes = Array((barcode + "\r\n").utf8)
        let written = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            return say("could not send \(barcode): \(String(cString: strerror(errno)))")
        }
        say("sent \(barcode)")
    }

    /// Prints what the app writes to the scanner (a real one takes commands: beep, trigger), so the line's buffer
    /// never fills.
    func drainAppWrites() {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            say("the app wrote \(count) bytes to the scanner: \(text.debugDescription)")
        }
    }

    /// Removes the link, then closes both ends: a hang-up for the app holding the port. Once.
    func unplug() {
        let first = unplugged.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        unlink(link)
        close(held)
        close(master)
        say("scanner unplugged: removed \(link), closed the line")
    }
}
