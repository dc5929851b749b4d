import Dispatch
import Foundation
import Offstage

#if canImport(Glibc)
import Glibc
#endif

/// The VoIP tutorial's phone: it keeps one TCP connection to its signalling server (the `PhoneServer` example) and
/// hands that socket to the system, so that while it is suspended an incoming call wakes it; it registers a
/// keep-alive handler that pings the server before each timeout (SPEC MODE-2).
///
/// Options (in the manifest's `OffstageLinux.Arguments`):
/// - `--server HOST:PORT` (default 127.0.0.1:5060) and `--name NAME` (default alice): where to register, as whom.
/// - `--keep-alive SECONDS`: the keep-alive timeout (default 600, the shortest the system allows by default).
/// - `--hang-in-keep-alive`: the keep-alive handler never returns (to see the system terminate it after 30 s).
@MainActor
final class PhoneDelegate: ApplicationDelegate {
    let server: (host: String, port: UInt16)
    let name: String
    let keepAlive: Double
    let hangsInKeepAlive: Bool
    var connection: Int32 = -1
    var reader: DispatchSourceRead?
    var received: [UInt8] = []

    init(arguments: [String]) {
        func value(_ option: String) -> String? {
            arguments.firstIndex(of: option).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        let address = (value("--server") ?? "127.0.0.1:5060").split(separator: ":")
        server = (String(address.first ?? "127.0.0.1"), address.count > 1 ? UInt16(address[1]) ?? 5060 : 5060)
        name = value("--name") ?? "alice"
        keepAlive = value("--keep-alive").flatMap(Double.init) ?? 600
        hangsInKeepAlive = arguments.contains("--hang-in-keep-alive")
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("did-finish-launching (\(options.reason.rawValue))")
        connect()
        let registered = application.setKeepAliveTimeout(keepAlive) { [weak self] in self?.keepAliveFired() }
        say(registered ? "keep-alive handler every \(Int(keepAlive)) s" : "keep-alive handler refused (see above)")
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { say("did-become-active") }
    func applicationDidEnterBackground(_ application: Application) { say("did-enter-background") }
    func applicationWillEnterForeground(_ application: Application) { say("will-enter-foreground") }

    /// Connects to the signalling server, registers, and hands the socket to the system.
    func connect() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = server.port.bigEndian
        address.sin_addr.s_addr = inet_addr(server.host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, connected == 0 else {
            say("cannot reach the signalling server at \(server.host):\(server.port) (errno \(errno))")
            if fd >= 0 { close(fd) }
            return
        }
        connection = fd
        send("REGISTER \(name)")
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        // While the app runs it reads the socket itself; while it is suspended the system watches it for the app.
        let reader = DispatchSource.makeReadSource(fileDescriptor: fd, queue: .main)
        reader.setEventHandler { [weak self] in MainActor.assumeIsolated { self?.drain() } }
        reader.resume()
        self.reader = reader
        do {
            try Application.shared.setVoIPSocket(fd) { [weak self] event in
                self?.say(event == .readable ? "woken: data on the signalling connection" : "woken: the server hung up")
                self?.drain()
            }
            say("connected to \(server.host):\(server.port) as \(name); the socket is handed to the system")
        } catch {
            say("cannot hand the socket to the system: \(error)")
        }
    }

    /// Reads whatever arrived and acts on each complete line.
    func drain() {
        guard connection >= 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(connection, &chunk, chunk.count, 0)
            if count > 0 {
                received += chunk[..<count]
                continue
            }
            if count == 0 {
                say("the signalling server closed the connection")
                reader?.cancel()
                close(connection)
                connection = -1
            }
            break
        }
        while let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: received[..<newline], as: UTF8.self)
            received.removeSubrange(...newline)
            if line.hasPrefix("RING ") {
                say("☎ incoming call from \(line.dropFirst(5))")
            } else if line == "PONG" {
                say("keep-alive answered")
            }
        }
    }

    func keepAliveFired() {
        say("keep-alive handler: pinging the server")
        if hangsInKeepAlive {
            say("keep-alive handler hangs")
            while true { sleep(60) }
        }
        send("PING")
    }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func say(_ line: String) {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        print(formatter.string(from: Date()) + " " + line)
    }
}

@main
struct PhoneApp {
    @MainActor static func main() {
        Application.main(delegate: PhoneDelegate(arguments: Array(CommandLine.arguments.dropFirst())))
    }
}
