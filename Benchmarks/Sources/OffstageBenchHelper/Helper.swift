import Glibc
import OffstageBenchKit

/// The baselines' other end, kept free of Foundation, Dispatch and the SDK so that it measures the kernel alone:
///
/// - `echo SOCKET`: a blocking Unix-socket server; for each NUL-terminated request it writes a reply of the size
///   the request asks for (``EchoWire``). Connections are served one after another.
/// - `tick`: a 1 Hz timer (an absolute `clock_nanosleep` loop), the idle-wake-ups baseline: about 60 wake-ups in
///   60 seconds.
/// - `connect-loop PORT REPORT`: connects to 127.0.0.1:PORT again and again (closing each connection with a reset,
///   so no port is left in TIME_WAIT) and sends a datagram `ok NS` or `refused NS` (CLOCK_MONOTONIC) to the Unix
///   socket REPORT whenever the outcome changes: what a rule on its sockets does, as the process sees it.
/// - `grow PROCS TOTAL_MIB STEP_MIB STEP_MS`: the memory-pressure benchmark's grower. It first writes its own pid into
///   the cgroup file PROCS (`-`: none), so every page it allocates afterwards is charged to that group, then maps
///   anonymous memory STEP_MIB at a time, every STEP_MS milliseconds (0: at once), writing every page, up to TOTAL_MIB;
///   then it sleeps until it is killed.
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
        case "connect-loop" where arguments.count > 3:
            guard let port = UInt16(arguments[2]) else { fail("connect-loop: \(arguments[2]) is not a port") }
            do {
                try connectLoop(port: port, report: arguments[3])
            } catch {
                fail("connect-loop: \(error)")
            }
        case "grow" where arguments.count > 5:
            guard let total = Int(arguments[3]), let step = Int(arguments[4]), let pause = UInt64(arguments[5]), step > 0 else {
                fail("grow: TOTAL_MIB, STEP_MIB and STEP_MS must be numbers, STEP_MIB above 0")
            }
            do {
                try grow(procs: arguments[2], totalMiB: total, stepMiB: step, stepMilliseconds: pause)
            } catch {
                fail("grow: \(error)")
            }
        default:
            fail("usage: OffstageBenchHelper echo SOCKET | tick | connect-loop PORT REPORT | grow PROCS TOTAL_MIB STEP_MIB STEP_MS")
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

    static func connectLoop(port: UInt16, report: String) throws {
        let reporter = try UnixSocket.datagram()
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var last: Bool?
        var pause = timespec(tv_sec: 0, tv_nsec: 50_000)
        while true {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw SystemCallError("socket") }
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            } == 0
            let at = MonotonicClock.now()
            close(fd)
            if connected != last {
                last = connected
                try UnixSocket.send(reporter, datagram: Array("\(connected ? "ok" : "refused") \(at)".utf8), to: report)
            }
            nanosleep(&pause, nil)
        }
    }

    static func grow(procs: String, totalMiB: Int, stepMiB: Int, stepMilliseconds: UInt64) throws {
        if procs != "-" {
            let fd = open(procs, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw SystemCallError("open \(procs)") }
            let pid = Array("\(getpid())".utf8)
            let written = pid.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            guard written == pid.count else { throw SystemCallError("write \(procs)") }
        }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var grown = 0
        var next = timespec()
        clock_gettime(CLOCK_MONOTONIC, &next)
        while grown < totalMiB {
            let mebibytes = min(stepMiB, totalMiB - grown)
            let length = mebibytes << 20
            guard let memory = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                memory != UnsafeMutableRawPointer(bitPattern: -1)
            else { throw SystemCallError("mmap \(mebibytes) MiB") }
            // Every page written: the memory is charged as it is touched, not when it is mapped.
            let bytes = memory.assumingMemoryBound(to: UInt8.self)
            for offset in stride(from: 0, to: length, by: page) { bytes[offset] = 0x5A }
            grown += mebibytes
            guard stepMilliseconds > 0, grown < totalMiB else { continue }
            next.tv_nsec += Int(stepMilliseconds % 1000) * 1_000_000
            next.tv_sec += Int(stepMilliseconds / 1000) + next.tv_nsec / 1_000_000_000
            next.tv_nsec %= 1_000_000_000
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil) == EINTR {}
        }
        while true { pause() }
    }

    static func fail(_ message: String) -> Never {
        let line = Array((message + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(64)
    }
}
