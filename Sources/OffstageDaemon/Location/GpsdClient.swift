import COffstageSystem
import Foundation
import Glibc
import OffstageCore
import Synchronization

/// Reads positions from gpsd over its JSON protocol (SPEC MODE-3: the source when gpsd is present).
///
/// One thread of its own connects, reads the VERSION banner, sends `?WATCH={"enable":true,"json":true};` and
/// reads newline-delimited reports: each TPV with a 2D or 3D fix becomes a `LocationFix`; SKY, DEVICES and the
/// other classes are ignored; a line that is not a gpsd report is counted in `malformedLineCount` and skipped.
/// When the connection is lost (or never made) it reports `.disconnected` and tries again after a delay that
/// doubles up to `gpsdReconnectMaximumDelay`. The thread blocks in poll(2) on the socket and an eventfd, so it
/// uses no CPU while waiting and `stop()` interrupts it at once.
public final class GpsdClient: LocationSource {
    private struct State: Sendable {
        var started = false
        var stopped = false
        var thread: WatcherThread?
        var wake: Int32 = -1
        var release: String?
        var connected = false
        var mode = 0
        var problem: String?
        var fixes = 0
        var malformed = 0
    }

    /// Where gpsd is expected.
    public let host: String
    /// gpsd's TCP port.
    public let port: Int
    private let settings: LocationSourceSettings
    private let clock: @Sendable () -> Instant
    private let gate = DeliveryGate()
    private let state = Mutex(State())

    /// A client for the gpsd at `settings.gpsdHost`:`settings.gpsdPort`; `clock` stamps fixes whose TPV has no
    /// time.
    public init(settings: LocationSourceSettings = .init(), clock: @escaping @Sendable () -> Instant = LocationClock.now) {
        self.settings = settings
        self.host = settings.gpsdHost
        self.port = settings.gpsdPort
        self.clock = clock
    }

    deinit {
        // A client dropped without stop(): end the thread's wait so it does not run forever. The thread holds
        // the client, so this only runs once the thread has ended or was never started.
        let wake = state.withLock { $0.wake }
        if wake >= 0 { _ = Glibc.close(wake) }
    }

    public func start(
        onFix: @escaping @Sendable (LocationFix) -> Void, onStatus: @escaping @Sendable (LocationSourceStatus) -> Void
    ) throws {
        try state.withLock { state in
            guard !state.started else { throw LocationSourceStartError.alreadyStarted("the gpsd client") }
            let wake = offstage_eventfd()
            guard wake >= 0 else {
                throw LocationSourceStartError("cannot create the eventfd that stops the gpsd client: "
                    + GpsdSocket.describe(errno) + "; raise the open-file limit (ulimit -n)")
            }
            do {
                // Created with the lock held, so a stop() from a callback on the new thread finds the handle.
                state.thread = try WatcherThread(name: "offstage-gpsd") { [self] in
                    run(wake: wake, onFix: onFix, onStatus: onStatus)
                }
            } catch {
                _ = Glibc.close(wake)
                throw LocationSourceStartError("cannot start the gpsd client's thread: \(error)")
            }
            state.wake = wake
            state.started = true
        }
    }

    public func stop() {
        gate.close()
        let (thread, wake) = state.withLock { state in
            state.stopped = true
            // Taken out so a second stop() does not join the thread twice.
            defer { state.thread = nil }
            return (state.thread, state.wake)
        }
        guard let thread else { return }
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, MemoryLayout<UInt64>.size)
        if !thread.isCurrent { thread.join() }
    }

    /// "gpsd 3.22 at 127.0.0.1:2947, 3D fix", or why there is none.
    public var description: String {
        let now = state.withLock { $0 }
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let name = now.release.map { "gpsd \($0)" } ?? "gpsd"
        let condition: String
        if now.stopped {
            condition = "stopped"
        } else if !now.started {
            condition = "not started"
        } else if !now.connected {
            condition = now.problem.map { "disconnected (\($0))" } ?? "connecting"
        } else {
            condition = now.mode >= 3 ? "3D fix" : now.mode == 2 ? "2D fix" : "no fix"
        }
        return "\(name) at \(address), \(condition)"
    }

    /// Lines from gpsd that were not a gpsd report (not JSON, no class, mistyped TPV, too long).
    public var malformedLineCount: Int { state.withLock { $0.malformed } }

    /// Fixes delivered so far.
    public var fixCount: Int { state.withLock { $0.fixes } }

    /// The thread: connection after connection until stopped.
    private func run(
        wake: Int32, onFix: @escaping @Sendable (LocationFix) -> Void,
        onStatus: @escaping @Sendable (LocationSourceStatus) -> Void
    ) {
        var failures = 0
        while true {
            let reason: String
            do throws(GpsdSocket.Interruption) {
                let socket = try GpsdSocket.connect(
                    host: host, port: port, timeout: settings.gpsdConnectTimeout, wake: wake)
                defer { socket.close() }
                try session(socket, wake: wake, failures: &failures, onFix: onFix, onStatus: onStatus)
                reason = "gpsd closed the connection"
            } catch {
                guard case .failed(let why) = error else { return }
                reason = why
            }
            let delay = min(
                settings.gpsdReconnectInitialDelay * pow(2, Double(min(failures, 62))),
                settings.gpsdReconnectMaximumDelay)
            failures += 1
            state.withLock { state in
                state.connected = false
                state.problem = reason
            }
            gate.deliver { onStatus(.disconnected(reason: reason, retryingIn: .seconds(double: delay))) }
            do {
                _ = try GpsdSocket.wait(wake, for: 0, wake: wake, timeout: delay)
            } catch {
                return
            }
        }
    }

    /// One connection: banner, WATCH, then reports until the connection ends (throws `.failed`) or stop()
    /// (throws `.stopped`).
    private func session(
        _ socket: GpsdSocket, wake: Int32, failures: inout Int, onFix: @escaping @Sendable (LocationFix) -> Void,
        onStatus: @escaping @Sendable (LocationSourceStatus) -> Void
    ) throws(GpsdSocket.Interruption) {
        let decoder = JSONDecoder()
        let bannerDeadline = clock() + .seconds(double: settings.gpsdConnectTimeout)
        var lines = GpsdLineSplitter(maximumLength: settings.gpsdMaximumLineLength)
        var greeted = false
        var lastStatus: LocationSourceStatus?
        func report(_ status: LocationSourceStatus) {
            guard status != lastStatus else { return }
            lastStatus = status
            gate.deliver { onStatus(status) }
        }
        while true {
            let timeout = greeted ? -1 : (bannerDeadline - clock()).inSeconds
            guard timeout != 0 && (greeted || timeout > 0),
                try GpsdSocket.wait(socket.fd, for: Int16(POLLIN), wake: wake, timeout: timeout)
            else {
                if greeted { continue }
                throw .failed("no VERSION banner within \(settings.gpsdConnectTimeout) s: is gpsd listening there?")
            }
            var buffer: [UInt8] = []
            try socket.read(into: &buffer)
            let (complete, overlong) = lines.append(buffer)
            if overlong > 0 { state.withLock { $0.malformed += overlong } }
            for line in complete {
                let message = GpsdMessage.decode(line, using: decoder)
                guard greeted else {
                    guard case .version(let release) = message else {
                        throw .failed("the first line is not gpsd's VERSION banner: is this gpsd?")
                    }
                    greeted = true
                    failures = 0
                    state.withLock { state in
                        state.release = release
                        state.connected = true
                        state.problem = nil
                        state.mode = 0
                    }
                    try socket.send("?WATCH={\"enable\":true,\"json\":true};\n", wake: wake, timeout: settings.gpsdConnectTimeout)
                    continue
                }
                switch message {
                case nil:
                    state.withLock { $0.malformed += 1 }
                case .tpv(let tpv):
                    state.withLock { $0.mode = tpv.mode ?? 0 }
                    if let fix = tpv.fix(now: clock(), defaultHorizontalAccuracy: settings.defaultHorizontalAccuracy) {
                        state.withLock { $0.fixes += 1 }
                        report(.delivering)
                        gate.deliver { onFix(fix) }
                    } else {
                        report(.noFix(detail: "gpsd reports mode \(tpv.mode ?? 0)"))
                    }
                case .version, .other:
                    continue
                }
            }
        }
    }
}
