import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Prints one line at once (stdout is a pipe or a file for a test or the demo, where it would be block-buffered).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The Phone example's signalling server: a small line protocol over TCP on loopback.
///
/// - A phone connects and sends `REGISTER <name>`; it stays connected and receives `RING <caller>` for each call.
/// - `PING` is answered `PONG` (the phone's keep-alive handler).
/// - Anyone may connect and send `CALL <name> <caller>`: the server rings that phone and answers `OK`, or
///   `NOT-REGISTERED` when no phone of that name is connected.
///
/// Usage: `PhoneServer [--port N]` (0, the default, picks a free port); it prints `listening on 127.0.0.1:PORT` once
/// it accepts connections, and a line for everything that happens. It runs until killed.
@main
struct PhoneServer {
    static func main() {
        let arguments = CommandLine.arguments
        let port = arguments.firstIndex(of: "--port").flatMap { arguments.indices.contains($0 + 1) ? UInt16(arguments[$0 + 1]) : nil } ?? 0
        do {
            try Server(port: port).run()
        } catch {
            say("PhoneServer: \(error)")
            exit(1)
        }
    }
}

struct ServerError: Error, CustomStringConvertible {
    let description: String
}

/// One `poll()` loop over the listening socket and every client.
final class Server {
    let listener: Int32
    var clients: [Int32: Client] = [:]

    final class Client {
        var buffer: [UInt8] = []
        var name: String?
    }

    init(port: UInt16) throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw ServerError(description: "socket: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else { throw ServerError(description: "bind/listen 127.0.0.1:\(port): errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        say("listening on 127.0.0.1:\(UInt16(bigEndian: address.sin_port))")
    }

    func run() throws {
        while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            fds += clients.keys.sorted().map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), -1) >= 0 || errno == EINTR else { throw ServerError(description: "poll: errno \(errno)") }
            for entry in fds where entry.revents != 0 {
                if entry.fd == listener {
                    let client = accept(listener, nil, nil)
                    if client >= 0 { clients[client] = Client() }
                } else {
                    read(from: entry.fd)
                }
            }
        }
    }

    func read(from fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0, let client = clients[fd] else { return drop(fd) }
        client.buffer += chunk[..<count]
        while let newline = client.buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: client.buffer[..<newline], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            client.buffer.removeSubrange(...newline)
            handle(line, from: fd, client)
        }
    }

    func handle(_ line: String, from fd: Int32, _ client: Client) {
        let words = line.split(separator: " ").map(String.init)
        switch words.first {
        case "REGISTER" where words.count == 2:
            client.name = words[1]
            say("\(words[1]) registered")
            send("REGISTERED\n", to: fd)
        case "PING":
            say("\(client.name ?? "?") keep-alive")
            send("PONG\n", to: fd)
        case "CALL" where words.count == 3:
            guard let phone = clients.first(where: { $0.value.name == words[1] })?.key else {
                say("call for \(words[1]) from \(words[2]): not registered")
                return send("NOT-REGISTERED\n", to: fd)
            }
            say("ringing \(words[1]) for \(words[2])")
            send("RING \(words[2])\n", to: phone)
            send("OK\n", to: fd)
        default:
            send("ERROR unknown command; use REGISTER NAME, PING or CALL NAME CALLER\n", to: fd)
        }
    }

    func send(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func drop(_ fd: Int32) {
        if let name = clients[fd]?.name { say("\(name) disconnected") }
        clients[fd] = nil
        close(fd)
    }
}
