import Foundation
import Glibc
import Synchronization

/// A loopback TCP listener that plays gpsd to the client under test: per connection, a script of lines to
/// send, of waiting for the client's `?WATCH`, and of how the connection ends.
final class FakeGpsd: Sendable {
    /// One step of a connection's script.
    enum Step: Sendable {
        /// Write these lines, each followed by `\r\n` as gpsd does.
        case send([String])
        /// Write raw bytes as they are (a line cut in two, a line without end).
        case sendRaw(String)
        /// Read the client's `?WATCH…;` line, to its newline (so closing later is a clean end, not a reset).
        case expectWatch
        /// Close the connection (a gpsd that died or was restarted).
        case close
        /// Keep the connection open until the fake is shut down.
        case hold
    }

    /// The port it listens on, on 127.0.0.1.
    let port: Int
    private let listener: Int32
    private let scripts: [[Step]]
    private let state = Mutex<(accepted: Int, commands: [String], open: [Int32], shut: Bool)>((0, [], [], false))
    private let done = DispatchGroup()

    /// Listens on a free port; the n-th connection plays `scripts[n]` (the last script for any beyond).
    init(scripts: [[Step]]) throws {
        self.scripts = scripts
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && listen(listener, 8) == 0
                    && getsockname(listener, raw, &length) == 0
            }
        }
        guard bound else {
            _ = Glibc.close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        done.enter()
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Connections accepted so far.
    var accepted: Int { state.withLock { $0.accepted } }

    /// The command lines clients sent (their `?WATCH`).
    var commands: [String] { state.withLock { $0.commands } }

    /// Stops listening, closes every connection and waits for the fake's threads.
    func shutDown() {
        let open = state.withLock { state in
            state.shut = true
            return state.open
        }
        // shutdown() wakes a thread blocked in accept() or read() on Linux; close comes after.
        _ = Glibc.shutdown(listener, Int32(SHUT_RDWR))
        for fd in open { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        done.wait()
        _ = Glibc.close(listener)
    }

    private func acceptLoop() {
        defer { done.leave() }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let script = state.withLock { state -> [Step]? in
                if state.shut { return nil }
                state.open.append(fd)
                state.accepted += 1
                return scripts[min(state.accepted, scripts.count) - 1]
            }
            guard let script else {
                _ = Glibc.close(fd)
                return
            }
            done.enter()
            Thread.detachNewThread { [self] in
                defer { done.leave() }
                play(script, on: fd)
            }
        }
    }

    private func play(_ script: [Step], on fd: Int32) {
        defer {
            state.withLock { state in state.open.removeAll { $0 == fd } }
            _ = Glibc.close(fd)
        }
        for step in script {
            switch step {
            case .send(let lines):
                write(lines.map { $0 + "\r\n" }.joined(), to: fd)
            case .sendRaw(let text):
                write(text, to: fd)
            case .expectWatch:
                var received = ""
                while !received.hasSuffix("\n") {
                    var byte: UInt8 = 0
                    guard Glibc.read(fd, &byte, 1) == 1 else { return }
                    received.append(Character(Unicode.Scalar(byte)))
                }
                state.withLock { $0.commands.append(received.trimmingCharacters(in: .whitespacesAndNewlines)) }
            case .close:
                return
            case .hold:
                // Returns when shutDown() shuts the socket down (read gives 0) or the client closes it.
                var byte: UInt8 = 0
                while Glibc.read(fd, &byte, 1) == 1 {}
                return
            }
        }
    }

    private func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            bytes = bytes.dropFirst(sent)
        }
    }
}

/// gpsd's own output, to feed the fake. The VERSION, DEVICES, WATCH, DEVICE and TPV lines were captured from
/// gpsd 3.22 (Debian) fed `Data/location/walk.nmea` by gpsfake; the SKY and 2D TPV lines follow the examples of
/// gpsd_json(5) (the log has no satellites and only 3D fixes).
enum GpsdLines {
    static let version = #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#
    static let devices =
        #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/1","activated":"2026-11-23T21:56:11.954Z","native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}]}"#
    static let watch =
        #"{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,"timing":false,"split24":false,"pps":false}"#
    static let device =
        #"{"class":"DEVICE","path":"/dev/pts/1","driver":"NMEA0183","activated":"2026-11-23T21:56:11.998Z","native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}"#
    /// A 3D fix before the receiver has given a time.
    static let tpvNoTime =
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"lat":52.517274167,"lon":13.385063833,"altHAE":76.2000,"altMSL":36.6000,"alt":36.6000,"magvar":4.1,"geoidSep":39.600,"eph":17.100}"#
    static let tpv1 =
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2024-05-18T09:31:20.000Z","ept":0.005,"lat":52.517274167,"lon":13.385063833,"altHAE":76.2000,"altMSL":36.6000,"alt":36.6000,"epv":29.900,"track":0.0000,"magtrack":4.0530,"magvar":4.1,"speed":8.298,"geoidSep":39.600,"eph":17.100,"sep":30.400}"#
    static let tpv2 =
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2024-05-18T09:31:21.000Z","ept":0.005,"lat":52.517347667,"lon":13.385120667,"altHAE":76.2000,"altMSL":36.6000,"alt":36.6000,"epv":29.900,"track":0.0000,"magtrack":4.0530,"magvar":4.1,"speed":8.298,"climb":0.000,"epc":59.80,"geoidSep":39.600,"eph":24.700,"sep":30.400}"#
    static let tpv3 =
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2024-05-18T09:31:22.000Z","ept":0.005,"lat":52.517421667,"lon":13.385069167,"altHAE":75.9000,"altMSL":36.3000,"alt":36.3000,"epv":27.600,"track":0.0000,"magtrack":4.0530,"magvar":4.1,"speed":8.298,"climb":-0.300,"epc":57.50,"geoidSep":39.600,"eph":17.100,"sep":34.200}"#
    /// What gpsd says while the receiver has no fix.
    static let tpvNoFix = #"{"class":"TPV","device":"/dev/pts/1","mode":1}"#
    /// A 2D fix in the pre-3.20 style: no eph, only epx/epy.
    static let tpv2D =
        #"{"class":"TPV","device":"/dev/pts/1","mode":2,"time":"2005-06-08T10:34:48.283Z","ept":0.005,"lat":46.498293369,"lon":7.567411672,"alt":1343.127,"epx":12.5,"epy":20.25,"track":10.3788,"speed":0.091}"#
    static let sky =
        #"{"class":"SKY","device":"/dev/pts/1","time":"2005-07-08T11:28:07.114Z","xdop":1.55,"hdop":1.24,"pdop":1.99,"satellites":[{"PRN":23,"el":6,"az":84,"ss":0,"used":false},{"PRN":28,"el":7,"az":160,"ss":0,"used":false},{"PRN":8,"el":66,"az":189,"ss":44,"used":true}]}"#
}
