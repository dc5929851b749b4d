import COffstageSystem
import Foundation
import Glibc
import Testing

@testable import Offstage

/// A pseudo-terminal standing in for a serial accessory: the test holds the master (the device's side) and the
/// session under test opens the slave by its path.
final class TestLine {
    let master: Int32
    let slave: String

    init() throws {
        var name = [CChar](repeating: 0, count: 128)
        master = offstage_open_pty(&name, name.count)
        try #require(master >= 0)
        slave = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
    }

    deinit { hangUp() }

    /// The device sends `text`.
    func send(_ text: String) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) } == bytes.count)
    }

    /// What the device received from the session within `timeout`, once `count` bytes came.
    func received(_ count: Int, timeout: Duration = .seconds(3)) -> [UInt8] {
        readUntil(count, timeout: timeout) { buffer in
            buffer.withUnsafeMutableBytes { read(self.master, $0.baseAddress, $0.count) }
        }
    }

    /// The device's end closes: a hang-up for the slave's holders.
    func hangUp() {
        guard isOpen else { return }
        isOpen = false
        close(master)
    }

    private var isOpen = true
}

/// Reads with `read` (non-blocking) until `count` bytes came or `timeout` passed.
func readUntil(_ count: Int, timeout: Duration = .seconds(3), _ read: (inout [UInt8]) -> Int) -> [UInt8] {
    let end = ContinuousClock.now + timeout
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while bytes.count < count && ContinuousClock.now < end {
        let result = read(&buffer)
        if result > 0 { bytes += buffer[..<result] } else { usleep(10_000) }
    }
    return bytes
}

/// What a session read within `timeout`, once `count` bytes came.
func sessionRead(_ session: AccessorySession, _ count: Int) throws -> [UInt8] {
    let end = ContinuousClock.now + .seconds(3)
    var bytes: [UInt8] = []
    while bytes.count < count && ContinuousClock.now < end {
        let chunk = try session.read()
        if chunk.isEmpty { usleep(10_000) } else { bytes += chunk }
    }
    return bytes
}

/// A temporary folder, removed after `body`.
func withFolder<T>(_ body: (String) throws -> T) throws -> T {
    var template = Array("/tmp/offstage-session-XXXXXX".utf8CString)
    let folder = String(cString: try #require(mkdtemp(&template)))
    defer { try? FileManager.default.removeItem(atPath: folder) }
    return try body(folder)
}

/// SPEC MODE-4, the app's side: opening an accessory's channel, reading and writing it, and its hang-up.
@Suite("AccessorySession (MODE-4)")
struct AccessorySessionTests {
    @Test("A serial port opens non-blocking, close-on-exec and in raw mode, and bytes pass unchanged both ways")
    func serialPort() throws {
        let line = try TestLine()
        let session = try AccessorySession(path: line.slave)
        defer { session.close() }
        #expect(session.kind == .characterDevice && session.isTerminal)
        let fd = session.fileDescriptor
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0, "reading must never wait")
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "the app's children must not inherit the port")
        var settings = termios()
        try #require(tcgetattr(fd, &settings) == 0)
        #expect(settings.c_lflag & tcflag_t(ICANON | ECHO | ISIG) == 0, "no line editing, echo or signals")
        #expect(settings.c_iflag & tcflag_t(ICRNL | IXON) == 0, "no CR translation or flow-control characters")
        #expect(settings.c_oflag & tcflag_t(OPOST) == 0, "output passes unchanged")
        let minimum = withUnsafeBytes(of: settings.c_cc) { $0[Int(VMIN)] }
        #expect(minimum == 1, "a read with nothing there is EAGAIN, not an end of file")

        #expect(try session.read().isEmpty, "nothing sent yet: nothing read, at once")
        line.send("4006381333931\r\n")
        #expect(try sessionRead(session, 15) == Array("4006381333931\r\n".utf8), "the CR arrives as sent")
        try session.write("BEEP\n")
        #expect(line.received(5) == Array("BEEP\n".utf8), "no CR LF translation on the way out")
    }

    @Test("The device hanging up is a disconnection: reading and writing say so")
    func hangUp() throws {
        let line = try TestLine()
        let session = try AccessorySession(path: line.slave)
        defer { session.close() }
        line.hangUp()
        #expect(throws: AccessoryError.self) { _ = try session.read() }
        do {
            _ = try session.read()
        } catch {
            #expect(error.code == .disconnected)
            #expect(error.message.contains(line.slave))
        }
        do {
            try session.write("x")
            Issue.record("writing to a hung-up line must fail")
        } catch {
            #expect(error.code == .disconnected)
        }
    }

    @Test("A link to the device is followed, as udev's /dev/serial/by-id links are; the baud rate is set")
    func link() throws {
        let line = try TestLine()
        try withFolder { folder in
            let link = folder + "/usb-Example_Scanner-if00"
            try #require(symlink(line.slave, link) == 0)
            let session = try AccessorySession(path: link, baudRate: 9_600)
            defer { session.close() }
            #expect(session.path == link && session.isTerminal)
            var settings = termios()
            try #require(tcgetattr(session.fileDescriptor, &settings) == 0)
            #expect(cfgetospeed(&settings) == speed_t(B9600))
            line.send("A1\n")
            #expect(try sessionRead(session, 3) == Array("A1\n".utf8))
        }
    }

    @Test("Nothing at the path, a regular file, a bad baud rate: each error has its code, the path and a fix")
    func openErrors() throws {
        try withFolder { folder in
            func code(_ path: String, baudRate: Int? = nil) -> AccessoryError? {
                do {
                    _ = try AccessorySession(path: path, baudRate: baudRate)
                    return nil
                } catch {
                    return error
                }
            }
            let missing = code(folder + "/ttyACM9")
            #expect(missing?.code == .notConnected)
            #expect(missing?.message.contains(folder + "/ttyACM9") == true && missing?.fix.isEmpty == false)
            let dangling = folder + "/gone"
            try #require(symlink(folder + "/nothing", dangling) == 0)
            #expect(code(dangling)?.code == .notConnected, "a link left after the device went is not connected")
            _ = FileManager.default.createFile(atPath: folder + "/file", contents: Data("x".utf8))
            #expect(code(folder + "/file")?.code == .invalidArgument)
            let line = try TestLine()
            #expect(code(line.slave, baudRate: 12_345)?.code == .invalidArgument)
        }
    }

    @Test("A Unix socket path is connected as a stream; the peer closing is a disconnection")
    func unixSocket() throws {
        try withFolder { folder in
            let path = folder + "/heart-rate.sock"
            let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer { close(listener) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try #require(bound == 0 && listen(listener, 1) == 0)
            let session = try AccessorySession(path: path)
            defer { session.close() }
            #expect(session.kind == .socket && !session.isTerminal)
            let peer = accept(listener, nil, nil)
            try #require(peer >= 0)
            #expect(try session.read().isEmpty)
            let beat = Array("bpm 72\n".utf8)
            _ = beat.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) }
            #expect(try sessionRead(session, beat.count) == beat)
            try session.write("ack\n")
            _ = fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK)
            #expect(
                readUntil(4) { buffer in buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) } }
                    == Array("ack\n".utf8))
            close(peer)
            #expect(throws: AccessoryError.disconnected(path)) { _ = try sessionRead(session, 1) }
        }
    }

    @Test("A closed session fails reading and writing with `closed`; closing twice is harmless")
    func closed() throws {
        let line = try TestLine()
        let session = try AccessorySession(path: line.slave)
        session.close()
        session.close()
        #expect(!session.isOpen && session.fileDescriptor == -1)
        #expect(throws: AccessoryError.self) { _ = try session.read() }
        do {
            try session.write("x")
        } catch {
            #expect(error.code == .closed)
        }
    }
}
