import Glibc
import OffstageBenchKit

/// The baselines' other end, kept free of Foundation, Dispatch and the SDK so that it measures the kernel alone:
///
/// - `echo SOCKET`: a blocking Unix-socket server; for each NUL-terminated request it writes a reply of the size
///   the request asks for (``EchoWire``). Connections are served one after another.
/// - `tick`: a 1 Hz timer (an absolute `clock_nanosleep` loop), the idle-wake-ups baseline: about 60 wake-ups in
///   60 seconds.
@main
struct OffstageBenchHelper {
    static func main() {
        let arguments = CommandLine.arguments
        switch arguments.count > 1 ? arguments[1] : "" {
        case "echo" where arguments.count > 2:
            do {
                try echo(path: arguments[2])
            } catch {
                fail("echo: \(error)")
            }
        case "tick":
            tick()
        default:
            fail("usage: OffstageBenchHelper echo SOCKET | tick")
        }
    }

    static func echo(path: String) throws {
        let listener = try UnixSocket.listen(path: path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
        // Replies are made once per size, so the loop does no work beyond the system calls.
        var replies: [Int: [UInt8]] = [:]
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                throw SystemCallError("accept")
            }
            serving: while true {
                let length: Int
                do {
                    length = try UnixSocket.readMessage(connection, into: buffer)
                } catch {
                    break serving
                }
                guard length > 0 else { break serving }
                let size = EchoWire.replySize(of: UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
                let reply = replies[size] ?? EchoWire.reply(size: max(size, 1))
                replies[size] = reply
                do {
                    try reply.withUnsafeBytes { try UnixSocket.writeAll(connection, $0) }
                } catch {
                    break serving
                }
            }
            close(connection)
        }
    }

    static func tick() {
        var next = timespec()
        clock_gettime(CLOCK_MONOTONIC, &next)
        while true {
            next.tv_sec += 1
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil) == EINTR {}
        }
    }

    static func fail(_ message: String) -> Never {
        let line = Array((message + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(64)
    }
}
