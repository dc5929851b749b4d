import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A headless PulseAudio server of the test's own, in a temporary folder, with a null sink whose monitor the test
/// records: so a test can check that sound really reaches a sound server, on a machine without a sound card.
///
/// Self-contained (Foundation only) so it can be copied unchanged into another test target. Needs `pulseaudio`
/// and `parec` (package pulseaudio-utils) in PATH. It ends exactly the processes it started, by pid, and removes
/// its folder: in ``stop()`` or, at the latest, when it is deallocated.
///
/// ```swift
/// let server = try PulseAudioServer.start()
/// defer { server.stop() }
/// setenv("PULSE_SERVER", server.address, 1)
/// try server.startRecording()
/// … play …
/// let sound = try server.stopRecording().measure()   // sound.maxAmplitude > 0.1: real sound
/// ```
public final class PulseAudioServer: @unchecked Sendable {  // used by one test at a time; the lock guards the processes
    /// Why the server could not start, for the test's message.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// What was recorded: interleaved stereo s16le samples at 44100 Hz.
    public struct Recording: Sendable {
        /// The samples.
        public let samples: [Int16]

        /// RMS and peak of the whole recording.
        public func measure() -> Measurement { Measurement(samples[...]) }

        /// RMS and peak of its last `seconds`.
        public func measure(lastSeconds seconds: Double) -> Measurement {
            Measurement(samples.suffix(Int(seconds * 44100) * 2))
        }
    }

    /// How loud a recording, or part of one, is.
    public struct Measurement: CustomStringConvertible, Sendable {
        /// Stereo frames recorded (44100 a second).
        public let frames: Int
        /// Root mean square of all samples, 0...1 of full scale.
        public let rms: Double
        /// Largest absolute sample, 0...1 of full scale.
        public let maxAmplitude: Double

        /// Measures `samples`.
        init(_ samples: ArraySlice<Int16>) {
            frames = samples.count / 2
            let squares = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
            rms = samples.isEmpty ? 0 : (squares / Double(samples.count)).squareRoot() / 32768
            maxAmplitude = Double(samples.map { abs(Int($0)) }.max() ?? 0) / 32768
        }

        /// As a test message shows it.
        public var description: String {
            String(format: "%d frames, RMS %.3f, max amplitude %.3f", frames, rms, maxAmplitude)
        }
    }

    /// The null sink the server plays to (its default sink).
    public static let sinkName = "offstage_null"
    /// The server's folder: configuration, socket, logs, recordings.
    public let folder: URL
    /// The server's native protocol socket.
    public var socketPath: String { folder.appendingPathComponent("native").path }
    /// What PULSE_SERVER must be for a client to use this server.
    public var address: String { "unix:\(socketPath)" }
    /// Guards the processes.
    private let lock = NSLock()
    /// The pulseaudio process; nil once stopped.
    private var server: SpawnedProcess?
    /// The parec process recording now, and its file.
    private var recorder: (process: SpawnedProcess, file: URL)?

    /// Starts a server and waits (up to `timeout` seconds) until its socket accepts clients.
    public static func start(timeout: Double = 10) throws -> PulseAudioServer {
        guard let pulseaudio = executable("pulseaudio") else { throw StartError(description: "pulseaudio is not in PATH") }
        guard executable("parec") != nil else { throw StartError(description: "parec (pulseaudio-utils) is not in PATH") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pulse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let instance = PulseAudioServer(folder: folder)
        let script = """
            load-module module-null-sink sink_name=\(sinkName)
            load-module module-native-protocol-unix auth-anonymous=1 socket=\(instance.socketPath)
            set-default-sink \(sinkName)

            """
        try script.write(to: folder.appendingPathComponent("pa.pa"), atomically: true, encoding: .utf8)
        let log = folder.appendingPathComponent("pulseaudio.log")
        let process = try instance.launch(
            pulseaudio,
            [
                "-n", "--daemonize=no", "--system=false", "--exit-idle-time=-1",
                "-F", folder.appendingPathComponent("pa.pa").path,
                "--disallow-exit", "--use-pid-file=no", "--log-target=stderr",
            ], output: nil, errors: log)
        instance.lock.withLock { instance.server = process }
        let deadline = Date().addingTimeInterval(timeout)
        while !instance.acceptsConnections() {
            guard process.isRunning, Date() < deadline else {
                let tail = (try? String(contentsOf: log, encoding: .utf8))?.split(separator: "\n").suffix(5)
                instance.stop()
                throw StartError(
                    description: "pulseaudio \(process.isRunning ? "did not open its socket in \(timeout) s" : "exited")"
                        + ": " + (tail?.joined(separator: " | ") ?? "no log"))
            }
            usleep(20_000)
        }
        return instance
    }

    /// A server in `folder`, not started.
    private init(folder: URL) { self.folder = folder }

    /// Stops whatever is still running.
    deinit { stop() }

    /// Starts recording the null sink's monitor (s16le, 44100 Hz, stereo) and waits until samples flow.
    public func startRecording() throws {
        guard let parec = Self.executable("parec") else { throw StartError(description: "parec is not in PATH") }
        let file = folder.appendingPathComponent("recording-\(UUID().uuidString).raw")
        try Data().write(to: file)
        let process = try launch(
            parec,
            [
                "--server=\(address)", "-d", "\(Self.sinkName).monitor", "--raw", "--format=s16le", "--rate=44100",
                "--channels=2", "--latency-msec=20",
            ], output: file, errors: folder.appendingPathComponent("parec.log"))
        lock.withLock { recorder = (process, file) }
        // The monitor of a null sink renders silence while nothing plays, so bytes arriving mean parec is connected.
        let deadline = Date().addingTimeInterval(10)
        while Self.size(of: file) == 0, Date() < deadline, process.isRunning { usleep(10_000) }
        guard Self.size(of: file) > 0 else { throw StartError(description: "parec recorded nothing in 10 s") }
    }

    /// Stops recording and returns what was recorded.
    public func stopRecording() throws -> Recording {
        guard let (process, file) = lock.withLock({ () -> (SpawnedProcess, URL)? in
            defer { recorder = nil }
            return recorder
        }) else { throw StartError(description: "not recording") }
        Self.end(process)
        let data = try Data(contentsOf: file)
        let samples = data.withUnsafeBytes { raw in
            (0..<(raw.count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * $0, as: Int16.self)) }
        }
        return Recording(samples: samples)
    }

    /// Ends parec and pulseaudio (SIGTERM, then SIGKILL after 5 s), by their pids, and removes the folder.
    public func stop() {
        let (server, recorder) = lock.withLock { () -> (SpawnedProcess?, SpawnedProcess?) in
            defer { (self.server, self.recorder) = (nil, nil) }
            return (self.server, self.recorder?.process)
        }
        if let recorder { Self.end(recorder) }
        if let server { Self.end(server) }
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs `path` with `arguments` in the server's environment (its folder as XDG_RUNTIME_DIR and HOME, so it
    /// touches nothing of the user's), standard output to `output` (or nowhere), standard error to `errors`.
    private func launch(_ path: String, _ arguments: [String], output: URL?, errors: URL) throws -> SpawnedProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = folder.path
        environment["HOME"] = folder.path
        environment["PULSE_SERVER"] = nil
        return try SpawnedProcess(
            path, arguments, environment: environment, output: output?.path ?? "/dev/null", errors: errors.path, truncate: true)
    }

    /// Whether the socket accepts a connection (it exists a little before it listens).
    private func acceptsConnections() -> Bool {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8CString)
        guard path.count <= MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.map { UInt8(bitPattern: $0) }) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// Ends `process` by its pid: SIGTERM, then SIGKILL if it is still there after 5 s; reaps it.
    private static func end(_ process: SpawnedProcess) { process.terminate(grace: 5) }

    /// The size of the file at `url`, 0 if unknown.
    private static func size(of url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The full path of `name` in PATH, or nil.
    static func executable(_ name: String) -> String? { SpawnedProcess.executable(name) }
}
